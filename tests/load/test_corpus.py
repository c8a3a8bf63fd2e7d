"""One ``--corpus PATH`` for any format: the reader is picked from what the path is, and a
path that is none of them, or lies outside the repository, is an error naming it."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.input_files import reading_within
from tests.load.test_bear import make_bear_database

RECORD = {"id": "d1", "title": "Bread", "text": "rest the dough"}


def test_missing_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_corpus(tmp_path / "nope.jsonl")
    assert str(caught.value) == f"{tmp_path / 'nope.jsonl'}: corpus path does not exist"


def test_unknown_file_type_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    assert str(caught.value) == (
        f"{path}: unsupported corpus: expected a .jsonl file, a BEIR folder, a folder of "
        "Markdown notes or a Bear SQLite database"
    )


def test_a_jsonl_file_plain_or_gzipped(tmp_path: Path) -> None:
    plain = tmp_path / "docs.jsonl"
    plain.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    packed = tmp_path / "docs.JSONL.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert load_corpus(plain).ids() == load_corpus(packed).ids() == {"d1"}


def test_a_folder_with_corpus_jsonl_is_beir_and_any_other_folder_is_markdown(
    tmp_path: Path,
) -> None:
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text(
        json.dumps({"_id": "p1", "title": "", "text": "a passage"}) + "\n", encoding="utf-8"
    )
    notes = tmp_path / "notes"
    (notes / "recipes").mkdir(parents=True)
    (notes / "recipes" / "bread.md").write_text("# Bread\nrest the dough\n", encoding="utf-8")
    assert load_corpus(beir).ids() == {"p1"}
    assert load_corpus(notes).ids() == {"recipes/bread"}


def test_a_sqlite_database_is_bear_by_its_suffix_or_its_first_bytes(tmp_path: Path) -> None:
    named = make_bear_database(tmp_path / "notes.bearnote")
    unnamed = tmp_path / "export.data"
    unnamed.write_bytes(named.read_bytes())
    assert load_corpus(unnamed).ids() == load_corpus(named).ids()
    assert "UUID-PASTA" in load_corpus(unnamed).ids()


def test_a_corpus_outside_the_repository_is_refused(tmp_path: Path) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    outside = tmp_path / "secret.jsonl"
    outside.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    link = repository / "docs.jsonl"
    os.symlink(outside, link)
    with reading_within([repository]), pytest.raises(InputError) as caught:
        load_corpus(link)
    assert str(caught.value).startswith(
        f"{link}: resolves to {outside}, outside the repository ({repository}); refusing"
    )
