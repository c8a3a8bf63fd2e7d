"""The documentation's tables say what the option table declares."""

from __future__ import annotations

import re
from pathlib import Path

from retrieval_eval.config.markdown import (
    KEY_MARKERS,
    ORIGIN_MARKERS,
    between,
    key_table,
    origin_table,
    shown_default,
)
from retrieval_eval.config.table import rows
from tests.support.markdown import table_rows

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_origin_table_is_written_from_the_declarations() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert between(text, ORIGIN_MARKERS) == origin_table()


def test_the_key_table_is_written_from_the_declarations() -> None:
    """Each top-level setting once, in the model's order, a table of entries in brackets,
    with the text its declaration gives the page (``long_doc``, else ``doc``)."""
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert between(text, KEY_MARKERS) == key_table()
    keys = [cells[0] for cells in table_rows(key_table(), "Key")]
    top = [row for row in rows() if "." not in row.key]
    assert len(keys) == len(top)
    assert "`[judge]`" in keys and "`[tolerances]`" in keys and "`tolerance`" in keys
    assert "`[measures]`" not in keys and "`measures`" in keys  # an array, not a table
    by_key = {row.key: row for row in top}
    assert by_key["k"].long_doc == by_key["k"].doc  # nothing more to say: the one line


def test_a_small_table_of_names_is_shown_whole() -> None:
    assert shown_default({"a.jsonl": "dense"}) == '`a.jsonl = "dense"`'
    assert shown_default({}) == "none"
    assert shown_default({"x": 1.0}) == "(table)"


def test_the_key_tables_defaults_are_the_declared_ones() -> None:
    """docs/configuration.md's table of keys explains each at length; every default it gives
    in code form is the one the settings declare (prose such as "see below" is left be)."""
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    declared = {row.key: shown_default(row.default) for row in rows()}
    checked = 0
    for cells in table_rows(text, "Key"):
        names = [n for n in re.findall(r"`\[?([a-z_.]+)\]?`", cells[0]) if n in declared]
        for name in names:
            if declared[name].startswith("`") and cells[1].startswith("`"):
                assert declared[name] in cells[1], (name, cells[1])
                checked += 1
    assert checked >= 15
