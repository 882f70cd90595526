"""Pages as a Parquet file, written as they come: :data:`SCHEMA` and :class:`ParquetPages`.

Rows are held until a row group is full (:data:`ROW_GROUP` rows, or fewer when their main
texts add up to :data:`ROW_GROUP_TEXT` characters) and then written out as one, so memory
stays that of a row group however many pages a crawl has. The file is written under a
``.part`` name and renamed when complete: a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from focused.errors import FocusedError

ROW_GROUP = 4096
ROW_GROUP_TEXT = 32_000_000  # characters of main text in a row group, at most about
PART_SUFFIX = ".part"

# The columns, in order. docs/reference/export.md describes each.
SCHEMA = pa.schema(
    [
        ("url", pa.string()),
        ("order", pa.int64()),
        ("time", pa.timestamp("us", tz="UTC")),
        ("status", pa.int16()),
        ("relevance", pa.float64()),
        ("probability", pa.float64()),
        ("relevant", pa.bool_()),
        ("category", pa.string()),
        ("language", pa.string()),
        ("title", pa.string()),
        ("main_text", pa.string()),
        ("near_duplicate_of", pa.string()),
        ("rendered", pa.string()),
        ("bad", pa.string()),
        ("depth", pa.int32()),
        ("parent", pa.string()),
        ("host", pa.string()),
        ("warc_file", pa.string()),
        ("warc_offset", pa.int64()),
        # focused export --rejudge: the crawl's verdict beside the final one, and what the
        # final one was made from (null without it)
        ("crawl_relevance", pa.float64()),
        ("crawl_relevant", pa.bool_()),
        ("crawl_category", pa.string()),
        ("judged_from", pa.string()),
    ]
)


def microseconds(unix_time: float | None) -> int | None:
    """A unix time as the ``time`` column holds it."""
    return None if unix_time is None else round(unix_time * 1_000_000)


class ParquetPages:
    """Writes page rows (dicts with :data:`SCHEMA`'s names; a missing one is null; ``time`` in
    unix seconds) to a Parquet file, zstd-compressed, a row group at a time (module doc). Use
    as a context manager: the file gets its name when the block ends without an error."""

    def __init__(self, path: Path, *, row_group: int = ROW_GROUP):
        self.path = path
        self.part = path.with_name(path.name + PART_SUFFIX)
        self.row_group = row_group
        self.columns: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
        self.text = 0
        self.rows = 0
        try:
            self.out = self.part.open("wb")
        except OSError as exc:
            raise FocusedError(f"-o {path}: {exc.strerror}") from None
        self.writer = pq.ParquetWriter(self.out, SCHEMA, compression="zstd")

    def __enter__(self) -> ParquetPages:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
        else:
            with contextlib.suppress(OSError):
                self.writer.close()
                self.out.close()
            self.part.unlink(missing_ok=True)

    def write(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            for name, values in self.columns.items():
                values.append(row.get(name))
            self.text += len(row.get("main_text") or "")
            if len(self.columns["url"]) >= self.row_group or self.text >= ROW_GROUP_TEXT:
                self.flush()

    def flush(self) -> None:
        """Write the rows held as a row group."""
        count = len(self.columns["url"])
        if not count:
            return
        self.columns["time"] = [microseconds(t) for t in self.columns["time"]]
        arrays = [pa.array(self.columns[f.name], f.type) for f in SCHEMA]
        try:
            self.writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=SCHEMA))
        except OSError as exc:  # the disk is full, say
            raise FocusedError(f"-o {self.path}: {exc.strerror or exc}") from None
        self.rows += count
        self.columns = {name: [] for name in SCHEMA.names}
        self.text = 0

    def close(self) -> None:
        self.flush()
        try:
            self.writer.close()
            self.out.close()
            os.replace(self.part, self.path)
        except OSError as exc:
            raise FocusedError(f"-o {self.path}: {exc.strerror or exc}") from None
