"""The pages a crawl's WARC files describe: each page's ``metadata`` record
(:func:`focused.extensions.warc.metadata_record`) with the file and offset of its response
record.

The files of a crawl are those of its name in the folder (as :class:`~focused.extensions.warc.
WarcFiles` names them, ``.open`` ones of a running or killed process included), read in name
order (per process, the order they were written), each once from start to end. A page's
metadata record follows its response (or revisit) record and that record's request record, so
the offset of the last response record read is all that is kept to point a page at its record.
A file cut short (a killed process's) is read up to its last whole record.

With ``bodies`` (``focused export --rejudge``), each page also comes with its kept response
(:class:`KeptResponse`: status, headers and body, as the spider parsed them), read in the same
pass; a revisit record's body is its original's, read from where that response record was
seen earlier in the files (None if it was not: a response of an earlier run).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from focused.errors import FocusedError
from focused.extensions.warc import METADATA_TYPE, file_names


def crawl_files(folder: Path, crawl: str) -> list[Path]:
    """The WARC files of ``crawl`` in ``folder``, in name order; none if there is no folder."""
    name = file_names(crawl)
    try:
        paths = [path for path in folder.iterdir() if name.fullmatch(path.name)]
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise FocusedError(f"--warc-dir {folder}: {exc.strerror}") from None
    return sorted(paths, key=lambda path: path.name)


@dataclass(frozen=True)
class KeptResponse:
    """A page's response as its WARC record keeps it: what the spider parsed."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


@dataclass
class WarcPages:
    """Reads the pages of a crawl's WARC files: :meth:`pages` yields each page's metadata
    fields with ``url``, ``warc_file`` and ``warc_offset`` (None if its response is not
    kept), and with ``bodies`` its ``response`` (a :class:`KeptResponse`, or None). ``cut``
    lists the files that ended in part of a record."""

    files: list[Path]
    cut: list[Path] = field(default_factory=list)
    bodies: bool = False
    # response record id -> (file, offset), for revisits (``bodies`` only)
    originals: dict[str, tuple[Path, int]] = field(default_factory=dict)

    def pages(self) -> Iterator[dict[str, Any]]:
        for path in self.files:
            try:
                with path.open("rb") as stream:
                    yield from self._file_pages(path, stream)
            except (ArchiveLoadFailed, EOFError, zlib.error, ValueError):
                self.cut.append(path)
            except OSError as exc:
                raise FocusedError(f"{path}: {exc.strerror}") from None

    def _file_pages(self, path: Path, stream: Any) -> Iterator[dict[str, Any]]:
        # WARC headers only, unless the responses are read too
        records = ArchiveIterator(stream, no_record_parse=not self.bodies)
        last_id, last_offset = None, 0  # the last response or revisit record read
        response = None  # its response, with ``bodies``
        for record in records:
            headers = record.rec_headers
            if record.rec_type in ("response", "revisit"):
                last_id = headers.get_header("WARC-Record-ID")
                # the body first: the record's offset is known once it is read to its end
                response = self._response(record) if self.bodies else None
                last_offset = records.get_record_offset()
                if self.bodies and record.rec_type == "response":
                    self.originals[last_id] = (path, last_offset)
            elif record.rec_type == "metadata" and record.content_type == METADATA_TYPE:
                body = record.raw_stream.read()
                if len(body) < record.length:
                    raise EOFError  # a record cut short: the end of what the file holds
                page = json.loads(body)
                page["url"] = headers.get_header("WARC-Target-URI")
                kept = last_id is not None and headers.get_header("WARC-Concurrent-To") == last_id
                page["warc_file"] = path.name if kept else None
                page["warc_offset"] = last_offset if kept else None
                if self.bodies:
                    page["response"] = response if kept else None
                yield page

    def _response(self, record: Any) -> KeptResponse | None:
        """The response a response or revisit record keeps (its headers parsed by warcio)."""
        http = record.http_headers
        if record.rec_type == "response":
            body = record.raw_stream.read()
        else:
            body = self._original_body(record.rec_headers.get_header("WARC-Refers-To"))
            if body is None:
                return None
        return KeptResponse(int(http.get_statuscode()), list(http.headers), body)

    def _original_body(self, record_id: str | None) -> bytes | None:
        """The body of the response record ``record_id`` seen earlier in the files."""
        if record_id not in self.originals:
            return None
        path, offset = self.originals[record_id]
        with path.open("rb") as stream:
            stream.seek(offset)
            return bytes(next(iter(ArchiveIterator(stream))).raw_stream.read())
