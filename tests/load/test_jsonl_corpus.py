from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus import load_corpus


def _write(tmp_path: Path, content: bytes | str) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def test_documents_keep_tags_metadata_and_source_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '\ufeff{"id": "a", "title": "Alpha", "text": "first", "tags": ["x", "#y", "x"], '
        '"metadata": {"lang": "en"}}\r\n\r\n{"id": "b", "title": "", "text": "second"}\r\n',
    )
    corpus = load_corpus(path)

    assert [(d.id, d.title, d.text, d.tags) for d in corpus.documents] == [
        ("a", "Alpha", "first", ("x", "y")),
        ("b", "", "second", ()),
    ]
    assert corpus.documents[0].metadata == {"lang": "en"}
    assert corpus.documents[1].source == f"{path}:3"


def test_empty_documents_are_skipped_and_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path, '{"id": "a", "title": " ", "text": ""}\n{"id": "b", "title": "B", "text": "x"}\n'
    )
    corpus = load_corpus(path)
    assert corpus.ids() == {"b"}
    assert corpus.skipped_empty == ("a",)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"id": "a", "title": "t", "text": "x", "tagz": []}\n',
            "1: unknown field 'tagz' (did you mean 'tags'?)",
        ),
        ('{"id": "a", "text": "x"}\n', "1: missing required field 'title'"),
        (
            '{"id": "a", "title": "t", "text": 5}\n',
            "1: field 'text': input should be a valid string (got 5)",
        ),
        (
            '{"id": "", "title": "t", "text": "x"}\n',
            "1: field 'id': string should have at least 1 character (got \"\")",
        ),
        ('\n["a"]\n', "2: not a JSON object (got an array); each line must be one {...} object"),
        (
            '{"id": "a",\n',
            "1: not valid JSON: Expecting property name enclosed in double quotes (column 12)",
        ),
        (
            '{"id": "a", "title": "t", "text": "x"}\n{"id": "a", "title": "t", "text": "y"}\n',
            "2: duplicate document id 'a' (first defined at {path}:1); document ids must be unique",
        ),
    ],
)
def test_bad_records_name_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    assert str(caught.value) == f"{path}:" + message.replace("{path}", str(path))


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        b'{"id": "a", "title": "t", "text": "x"}\n{"id": "b", "title": "\xff", "text": "y"}\n',
    )
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    assert (
        str(caught.value)
        == f"{path}:2: invalid UTF-8 at byte 23 of the line; save the file as UTF-8"
    )
