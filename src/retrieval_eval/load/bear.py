"""Read notes straight from a Bear 2 database (its Core Data SQLite file), so a
notes-search setup can be evaluated on the notes as they are, without an export.

Schema facts we rely on: ``ZSFNOTE`` (Z_PK, ZUNIQUEIDENTIFIER, ZTITLE, ZTEXT and the
flags ZTRASHED, ZARCHIVED, ZPERMANENTLYDELETED), ``ZSFNOTETAG`` (Z_PK, ZTITLE) and a
notes↔tags join table whose numeric names Core Data picks per model version
(``Z_5TAGS`` with ``Z_5NOTES`` and ``Z_13TAGS`` in Bear 2), so it is found by
pattern. Document id = ZUNIQUEIDENTIFIER (stable across edits, unlike Z_PK).
Trashed, archived and permanently deleted notes are not part of the searchable
set and are skipped; a flag column missing in an older schema counts as "not set".
The database is opened read-only: the user's notes are never written.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus_builder import CorpusBuilder
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.load.input_files import check_regular

_NOTE_COLUMNS = ("Z_PK", "ZUNIQUEIDENTIFIER", "ZTITLE", "ZTEXT")
_SKIP_FLAGS = ("ZTRASHED", "ZARCHIVED", "ZPERMANENTLYDELETED")
_JOIN_TABLE = re.compile(r"Z_(\d+)TAGS")
_JOIN_NOTE_COLUMN = re.compile(r"Z_(\d+)NOTES")
_JOIN_TAG_COLUMN = re.compile(r"Z_\d+TAGS")
_EXPECTED = "a Bear database has the tables ZSFNOTE, ZSFNOTETAG and Z_<n>TAGS"


@dataclass(frozen=True)
class _JoinTable:
    name: str
    note_column: str
    tag_column: str


def load_bear_database(path: Path) -> Corpus:
    try:
        check_regular(path)  # SQLite opens it itself: a FIFO would block it
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise InputError(f"cannot open SQLite database: {error}", file=path) from error
    with closing(connection):
        try:
            return _read_notes(connection, path)
        except sqlite3.DatabaseError as error:
            raise InputError(f"not a readable SQLite database: {error}", file=path) from error


def _read_notes(connection: sqlite3.Connection, path: Path) -> Corpus:
    tables = {
        row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    for required in ("ZSFNOTE", "ZSFNOTETAG"):
        if required not in tables:
            raise InputError(
                f"not a Bear database: table {required} is missing ({_EXPECTED})", file=path
            )
    note_columns = _columns(connection, "ZSFNOTE")
    missing = [column for column in _NOTE_COLUMNS if column not in note_columns]
    if missing:
        raise InputError(f"not a Bear database: ZSFNOTE lacks {', '.join(missing)}", file=path)
    if not {"Z_PK", "ZTITLE"} <= _columns(connection, "ZSFNOTETAG"):
        raise InputError("not a Bear database: ZSFNOTETAG lacks Z_PK or ZTITLE", file=path)
    join = _find_join_table(connection, tables, path)
    tags_by_note = _tags_by_note(connection, join)

    flags = [flag for flag in _SKIP_FLAGS if flag in note_columns]
    where = " AND ".join(f"COALESCE({flag}, 0) = 0" for flag in flags) or "1"
    query = (
        f"SELECT Z_PK, ZUNIQUEIDENTIFIER, ZTITLE, ZTEXT FROM ZSFNOTE WHERE {where} ORDER BY Z_PK"
    )
    builder = CorpusBuilder(path)
    for pk, unique_id, title, text in connection.execute(query):
        if not isinstance(unique_id, str) or not unique_id.strip():
            raise InputError(f"note Z_PK {pk} has no ZUNIQUEIDENTIFIER", file=path)
        body = text if isinstance(text, str) else ""
        document = Document(
            id=unique_id,
            title=title if isinstance(title, str) and title.strip() else _first_line(body),
            text=body,
            tags=tuple(tags_by_note.get(pk, ())),
            metadata={"bear_pk": pk},
            source=f"{path} (ZSFNOTE Z_PK {pk})",
        )
        builder.add(document, file=path, empty=not body.strip())
    return builder.build()


def _find_join_table(connection: sqlite3.Connection, tables: set[str], path: Path) -> _JoinTable:
    candidates = []
    for table in sorted(tables):
        table_match = _JOIN_TABLE.fullmatch(table)
        if table_match is None:
            continue
        columns = _columns(connection, table)
        note_columns = [c for c in columns if _JOIN_NOTE_COLUMN.fullmatch(c)]
        tag_columns = [c for c in columns if _JOIN_TAG_COLUMN.fullmatch(c)]
        if len(note_columns) == 1 and len(tag_columns) == 1:
            candidates.append(_JoinTable(table, note_columns[0], tag_columns[0]))
    if not candidates:
        raise InputError(
            "not a Bear database: no notes↔tags join table "
            f"(a table Z_<n>TAGS with columns Z_<n>NOTES and Z_<m>TAGS; {_EXPECTED})",
            file=path,
        )
    # Core Data names the join's note column after the table's own entity number.
    for candidate in candidates:
        table_number = _JOIN_TABLE.fullmatch(candidate.name)
        note_number = _JOIN_NOTE_COLUMN.fullmatch(candidate.note_column)
        if table_number and note_number and table_number.group(1) == note_number.group(1):
            return candidate
    return candidates[0]


def _tags_by_note(connection: sqlite3.Connection, join: _JoinTable) -> dict[int, list[str]]:
    query = (
        f'SELECT j."{join.note_column}", t.ZTITLE FROM "{join.name}" AS j '
        f'JOIN ZSFNOTETAG AS t ON t.Z_PK = j."{join.tag_column}" '
        f'ORDER BY j."{join.note_column}", t.ZTITLE'
    )
    tags: dict[int, list[str]] = {}
    for note_pk, tag in connection.execute(query):
        if isinstance(tag, str) and tag.strip():
            tags.setdefault(note_pk, []).append(tag.strip())
    return tags


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f'PRAGMA table_info("{table}")')}


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.lstrip("# ").strip()
    return ""
