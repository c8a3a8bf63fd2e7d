from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus import load_corpus

# note: (pk, unique id, title, text, trashed, archived, permanently deleted)
NOTES = [
    (
        1,
        "UUID-PASTA",
        "Carbonara",
        "# Carbonara\nEggs, pecorino, guanciale. #recipes/italian",
        0,
        0,
        0,
    ),
    (2, "UUID-TRIP", "Lisbon", "# Lisbon\n## Budget\nTrams are cheap.", 0, 0, None),
    (3, "UUID-TRASH", "Old", "# Old\ntrashed note", 1, 0, 0),
    (4, "UUID-ARCH", "Archived", "# Archived\narchived note", 0, 1, 0),
    (5, "UUID-GONE", "Gone", "# Gone\ndeleted note", 0, 0, 1),
    (6, "UUID-EMPTY", "", "", 0, 0, 0),
    (7, "UUID-NOTITLE", None, "First line is the title\nmore", 0, 0, 0),
]
TAGS = [(1, "recipes"), (2, "recipes/italian"), (3, "travel")]
NOTE_TAGS = [(1, 1), (1, 2), (2, 3), (3, 3)]


def make_bear_database(
    path: Path,
    *,
    join_table: str = "Z_5TAGS",
    note_column: str = "Z_5NOTES",
    tag_column: str = "Z_13TAGS",
) -> Path:
    with closing(sqlite3.connect(path)) as db:
        db.executescript(
            f"""
            CREATE TABLE ZSFNOTE (
                Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                ZARCHIVED INTEGER, ZENCRYPTED INTEGER, ZPERMANENTLYDELETED INTEGER,
                ZTRASHED INTEGER,
                ZCREATIONDATE TIMESTAMP, ZMODIFICATIONDATE TIMESTAMP,
                ZTITLE VARCHAR, ZTEXT VARCHAR, ZUNIQUEIDENTIFIER VARCHAR);
            CREATE TABLE ZSFNOTETAG (
                Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR);
            CREATE TABLE {join_table} ({note_column} INTEGER, {tag_column} INTEGER,
                PRIMARY KEY ({note_column}, {tag_column}));
            CREATE TABLE Z_5PINNEDINTAGS (Z_5PINNEDNOTES INTEGER, Z_13PINNEDINTAGS INTEGER);
            """
        )
        db.executemany(
            "INSERT INTO ZSFNOTE (Z_PK, ZUNIQUEIDENTIFIER, ZTITLE, ZTEXT, ZTRASHED, "
            "ZARCHIVED, ZPERMANENTLYDELETED)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            NOTES,
        )
        db.executemany("INSERT INTO ZSFNOTETAG (Z_PK, ZTITLE) VALUES (?, ?)", TAGS)
        db.executemany(f"INSERT INTO {join_table} VALUES (?, ?)", NOTE_TAGS)
        db.commit()
    return path


def test_live_notes_with_their_tags_and_nothing_else(tmp_path: Path) -> None:
    path = make_bear_database(tmp_path / "database.sqlite")
    before = path.read_bytes()
    corpus = load_corpus(path)

    assert [(d.id, d.title, d.tags) for d in corpus.documents] == [
        ("UUID-PASTA", "Carbonara", ("recipes", "recipes/italian")),
        ("UUID-TRIP", "Lisbon", ("travel",)),
        ("UUID-NOTITLE", "First line is the title", ()),
    ]
    assert corpus.documents[1].text == "# Lisbon\n## Budget\nTrams are cheap."
    assert corpus.skipped_empty == ("UUID-EMPTY",)
    assert path.read_bytes() == before  # opened read-only


def test_join_table_found_whatever_its_numbers(tmp_path: Path) -> None:
    path = make_bear_database(
        tmp_path / "bear-export",
        join_table="Z_7TAGS",
        note_column="Z_7NOTES",
        tag_column="Z_16TAGS",
    )
    # No suffix: recognised by the SQLite header.
    assert load_corpus(path).documents[0].tags == ("recipes", "recipes/italian")


def test_missing_tables_are_named(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (id TEXT)")
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    assert str(caught.value) == (
        f"{path}: not a Bear database: table ZSFNOTE is missing "
        "(a Bear database has the tables ZSFNOTE, ZSFNOTETAG and Z_<n>TAGS)"
    )


def test_missing_join_table_is_named(tmp_path: Path) -> None:
    path = make_bear_database(tmp_path / "db.sqlite")
    with closing(sqlite3.connect(path)) as db:
        db.execute("DROP TABLE Z_5TAGS")
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    assert str(caught.value) == (
        f"{path}: not a Bear database: no notes↔tags join table (a table Z_<n>TAGS with columns "
        "Z_<n>NOTES and Z_<m>TAGS; a Bear database has the tables ZSFNOTE, ZSFNOTETAG and "
        "Z_<n>TAGS)"
    )


def test_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("just text, not a database\n" * 10, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    assert str(caught.value) == f"{path}: not a readable SQLite database: file is not a database"


def test_duplicate_unique_identifier(tmp_path: Path) -> None:
    path = make_bear_database(tmp_path / "db.sqlite")
    with closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE ZSFNOTE SET ZUNIQUEIDENTIFIER = 'UUID-PASTA' WHERE Z_PK = 2")
        db.commit()
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    assert str(caught.value) == (
        f"{path}: duplicate document id 'UUID-PASTA' (first defined at {path} (ZSFNOTE Z_PK 1)); "
        "document ids must be unique"
    )
