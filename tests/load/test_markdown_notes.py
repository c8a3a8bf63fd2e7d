from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.markdown_notes import MAX_FRONT_MATTER_DEPTH

SHAKSHUKA = """---
title: Shakshuka
tags: [breakfast, "#eggs"]
date: 2024-01-02
---
# Eggs in tomato

Spicy #recipes/middle-eastern and #quick. See #42, [x](#anchor) http://a.b/#frag

```
#include <stdio.h>
```
#two words# done `#not-a-tag`
"""


def _notes(tmp_path: Path, files: dict[str, bytes | str]) -> Path:
    for name, content in files.items():
        path = tmp_path / "notes" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return tmp_path / "notes"


def test_ids_titles_tags_and_metadata_follow_the_convention(tmp_path: Path) -> None:
    folder = _notes(
        tmp_path,
        {
            "recipes/shakshuka.md": SHAKSHUKA,
            "travel/lisbon.md": (
                "\ufeffIntro line\r\n\r\n# Trip to Lisbon\r\n\r\n## Budget\r\n#travel/europe\r\n"
            ),
            "plain.md": "## Only a subheading\nbody #tag.\n",
            ".obsidian/workspace.md": "ignored",
            "readme.txt": "not a note",
        },
    )
    corpus = load_corpus(folder)
    by_id = {doc.id: doc for doc in corpus.documents}

    assert sorted(by_id) == ["plain", "recipes/shakshuka", "travel/lisbon"]
    shakshuka = by_id["recipes/shakshuka"]
    assert shakshuka.title == "Shakshuka"
    assert shakshuka.tags == ("breakfast", "eggs", "recipes/middle-eastern", "quick", "two words")
    assert shakshuka.metadata == {"date": "2024-01-02"}
    assert shakshuka.text.startswith("# Eggs in tomato\n")
    lisbon = by_id["travel/lisbon"]
    assert (lisbon.title, lisbon.tags) == ("Trip to Lisbon", ("travel/europe",))
    assert lisbon.text == "Intro line\n\n# Trip to Lisbon\n\n## Budget\n#travel/europe"
    assert (by_id["plain"].title, by_id["plain"].tags) == ("plain", ("tag",))


def test_markdown_and_upper_case_extensions_are_notes(tmp_path: Path) -> None:
    folder = _notes(
        tmp_path,
        {"a.markdown": "alpha", "B.MD": "beta", "x/c.Markdown": "gamma", "readme.txt": "no"},
    )
    assert load_corpus(folder).ids() == {"a", "B", "x/c"}


def test_blank_notes_are_skipped_and_counted(tmp_path: Path) -> None:
    folder = _notes(tmp_path, {"a.md": "---\ntitle: Nothing here\n---\n\n", "b.md": "text"})
    corpus = load_corpus(folder)
    assert corpus.ids() == {"b"}
    assert corpus.skipped_empty == ("a",)


def test_tags_as_a_comma_separated_string(tmp_path: Path) -> None:
    folder = _notes(tmp_path, {"a.md": "---\ntags: one, two three\n---\nbody\n"})
    assert load_corpus(folder).documents[0].tags == ("one", "two", "three")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"line one\nline \xff two\n", "a.md:2: invalid UTF-8; save the note as UTF-8"),
        (
            "# Title\nbody\n".encode("utf-16"),
            "a.md:1: the file is UTF-16 text (it starts with a UTF-16 byte-order mark); "
            "save it as UTF-8 (in PowerShell: Out-File -Encoding utf8)",
        ),
        (
            b"---\ntitle: [unclosed\n---\nbody\n",
            "a.md:2: front matter is not valid YAML: expected ',' or ']', but got '<stream end>'",
        ),
        (b"---\ntitle: x\nbody\n", "a.md:1: front matter opened with --- is never closed"),
        (b"---\n- a list\n---\nbody\n", "a.md:2: front matter must be a YAML mapping (key: value)"),
        (b"---\ntags: {a: 1}\n---\nbody\n", "a.md: front matter 'tags' must be a list or a string"),
        # Once "unexpected ValueError: Circular reference detected (a bug in retrieval-eval ...)".
        (
            b"---\nsee: &loop [*loop]\n---\nbody\n",
            "a.md:2: front matter uses a YAML alias (*loop); write the value out instead",
        ),
        # "Billion laughs": nine lines that expand to 10^9 strings when written out.
        (
            (
                "---\na: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
                + "".join(
                    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n"
                    for i in range(8)
                )
                + "---\nbody\n"
            ).encode(),
            "a.md:3: front matter uses a YAML alias (*a); write the value out instead",
        ),
    ],
)
def test_broken_notes_name_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    folder = _notes(tmp_path, {"a.md": content})
    with pytest.raises(InputError) as caught:
        load_corpus(folder)
    assert str(caught.value) == f"{folder}/{message}"


_YAML_PIECES = st.sampled_from(
    [
        "---\n",
        "...\n",
        "title: ",
        "tags: ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ", ",
        ": ",
        "&a ",
        "*a",
        "k: &a [*a]\n",
        "!!binary ",
        "!!python/object ",
        "#x ",
        "# Heading\n",
        "2024-01-02",
        ".nan",
        "1e999",
        "\t",
        "\r\n",
        "\r",
        "\n",
        "x",
        "'",
        '"',
        "|\n  ",
        "? ",
        "```\n",
        "\ufeff",
        "\x00",
    ]
)


@settings(max_examples=300, deadline=None)
@example(pieces=["k: &a [*a]\n"], fenced=True, raw=b"")  # once a ValueError
@given(pieces=st.lists(_YAML_PIECES, max_size=25), fenced=st.booleans(), raw=st.binary(max_size=40))
def test_any_note_loads_or_is_an_input_error(pieces: list[str], fenced: bool, raw: bytes) -> None:
    """Front matter is someone's YAML: whatever it holds, the load ends in documents or in a
    FILE: message, never in an "unexpected" error."""
    with tempfile.TemporaryDirectory() as folder:
        front_matter = "---\n" + "".join(pieces) + "\n---\n" if fenced else "".join(pieces)
        notes = _notes(Path(folder), {"a.md": front_matter.encode() + raw, "b.md": "body"})
        try:
            corpus = load_corpus(notes)
        except InputError as error:
            assert error.file is not None and error.file.endswith("a.md")
            return
        json.dumps([dict(document.metadata) for document in corpus.documents])


@settings(max_examples=60, deadline=None)
@given(
    depth=st.integers(min_value=1, max_value=MAX_FRONT_MATTER_DEPTH + 20),
    flow=st.booleans(),
    leaf=st.sampled_from(["x", "1", "{}", "[]"]),
)
def test_front_matter_nesting_up_to_the_bound_reads_and_deeper_is_refused(
    depth: int, flow: bool, leaf: str
) -> None:
    """Lists and mappings inside one another: read as YAML reads them up to
    MAX_FRONT_MATTER_DEPTH levels (the top mapping counts as one), refused beyond."""
    inner = depth - 1  # levels under the top-level mapping
    if flow:
        value = "[" * inner + leaf + "]" * inner
    else:
        value = "".join("\n" + " " * (2 * level + 2) + "-" for level in range(inner)) + " " + leaf
    text = f"---\nmeta: {value}\n---\n# T\n\nbody\n"
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "a.md").write_text(text, encoding="utf-8")
        levels = depth + (leaf in {"{}", "[]"})
        if levels > MAX_FRONT_MATTER_DEPTH:
            with pytest.raises(InputError, match="nested more than"):
                load_corpus(Path(folder))
        else:
            [document] = load_corpus(Path(folder)).documents
            expected = yaml.safe_load(text.split("---\n")[1])["meta"]
            assert document.metadata["meta"] == expected
