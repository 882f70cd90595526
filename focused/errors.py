"""Errors that reach the user as one line, never as a traceback."""


class FocusedError(Exception):
    """A problem the user can fix; its message is printed as is and the command exits 2."""


class TopicError(FocusedError):
    """A topic file (or a file it names) is missing, unreadable or wrong.

    The message names the file, the field and what is wrong, e.g.
    ``topics/birds.toml: relevance.good: category 'Science/Bird' is not in the taxonomy``.
    """

    def __init__(self, path: object, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"{self.path}: {field}: {problem}" if field else f"{self.path}: {problem}")
