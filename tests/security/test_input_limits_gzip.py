"""Threat: a corpus, dataset or run file small on disk but huge once read keeps the run busy.

A 20 KB gzip of 20 million blank lines, or a plain file of more lines than any real
corpus has, is refused with a ``FILE: message`` error the moment it passes its bound
(``MAX_GZIP_RATIO``, ``MAX_LINES`` in load/input_files.py), instead of being read on.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.load.input_files import MAX_GZIP_RATIO, MAX_LINES
from tests.security.entry import World, run_cli, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _blank_lines_gzipped(path: Path, count: int = 20_000_000) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb", compresslevel=9) as handle:
        handle.write(b"\n" * count)


def test_a_gzip_bomb_corpus_is_refused_by_run(world: World) -> None:
    corpus = world.workspace / "notes.jsonl.gz"
    _blank_lines_gzipped(corpus)
    assert corpus.stat().st_size < 25_000

    run = run_cli(world.workspace, "run", "--corpus", "notes.jsonl.gz")

    assert run.returncode == 2, run.log
    assert (
        f"notes.jsonl.gz: decompresses to more than {MAX_GZIP_RATIO} times its compressed size"
        in run.stderr
    ), run.log
    assert "unexpected" not in run.log


def test_a_gzip_bomb_in_a_beir_folder_is_refused_by_beir(tmp_path: Path) -> None:
    folder = tmp_path / "bomb"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "a wing"}) + "\n")
    _blank_lines_gzipped(folder / "queries.jsonl.gz")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")

    run = run_cli(tmp_path, "beir", str(folder), "--retriever", "bm25")

    assert run.returncode == 2, run.log
    assert "queries.jsonl.gz: decompresses to more than" in run.stderr, run.log


@pytest.mark.slow
def test_a_dataset_of_more_lines_than_any_real_one_is_refused(world: World) -> None:
    dataset = world.workspace / "datasets" / "keyword.jsonl"
    with dataset.open("ab") as handle:
        handle.write(b"\n" * MAX_LINES)

    run = run_cli(world.workspace, "validate", "datasets")

    assert run.returncode != 0, run.log
    assert f"keyword.jsonl: has more than {MAX_LINES:,} lines" in run.log, run.log
    assert "unexpected" not in run.log


def _run_file_config(folder: Path, run: str, fmt: str) -> Path:
    config = folder / "retrieval-eval.toml"
    config.write_text(f'[retrievers.run-file]\npath = "{run}"\nformat = "{fmt}"\n')
    return config


def _tiny_beir(folder: Path) -> Path:
    (folder / "beir" / "qrels").mkdir(parents=True)
    (folder / "beir" / "corpus.jsonl").write_text(
        json.dumps({"_id": "d1", "text": "a wing"}) + "\n"
    )
    (folder / "beir" / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "wing"}) + "\n")
    (folder / "beir" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder / "beir"


@pytest.mark.parametrize("name", ["run.trec.gz", "run.trec"])
def test_a_gzip_bomb_run_file_is_refused_by_the_run_file_retriever(
    tmp_path: Path, name: str
) -> None:
    """Gzip is recognised by its bytes, not its name: a bomb named run.trec is bounded too."""
    _blank_lines_gzipped(tmp_path / name)
    config = _run_file_config(tmp_path, name, "trec")
    beir = _tiny_beir(tmp_path)

    run = run_cli(tmp_path, "beir", str(beir), "--retriever", "run-file", "--config", str(config))

    assert run.returncode == 2, run.log
    assert f"{name}: decompresses to more than {MAX_GZIP_RATIO} times" in run.stderr, run.log


def test_a_gzip_bomb_run_is_refused_by_trec(tmp_path: Path) -> None:
    _blank_lines_gzipped(tmp_path / "run.gz")
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")

    run = run_cli(tmp_path, "trec", "qrels", "run.gz")

    assert run.returncode == 2, run.log
    assert f"run.gz: decompresses to more than {MAX_GZIP_RATIO} times" in run.stderr, run.log


def test_a_jsonl_run_file_of_more_lines_than_any_real_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run.jsonl").write_bytes(b"\n" * (MAX_LINES + 1))
    config = _run_file_config(tmp_path, "run.jsonl", "jsonl")
    beir = _tiny_beir(tmp_path)

    run = run_cli(tmp_path, "beir", str(beir), "--retriever", "run-file", "--config", str(config))

    assert run.returncode == 2, run.log
    assert f"run.jsonl: has more than {MAX_LINES:,} lines" in run.stderr, run.log
