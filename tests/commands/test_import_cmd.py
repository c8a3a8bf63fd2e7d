"""`retrieval-eval import beir` and `import queries` through the console script: the flags
reach the import (split, retrieval type, output, corpus), what was written and skipped is
said, and contradictory or malformed flags are usage errors naming them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval
from tests.compare.conftest import Project


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["query_id"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_import_beir_writes_the_split_and_type_the_flags_name(
    tmp_path: Path, beir_folder: Path
) -> None:
    test = retrieval_eval("import", "beir", "mini", "--out", "out", cwd=tmp_path)
    dev = retrieval_eval(
        "import", "beir", "mini", "--out", "dev", "--split", "dev", "--retrieval-type", "keyword",
        cwd=tmp_path,
    )  # fmt: skip

    assert test.returncode == 0, test.stderr
    assert test.stdout.splitlines() == [
        "wrote out/documents.jsonl (2 documents)",
        "wrote out/hybrid.jsonl (2 fixtures, 2 judgments)",
    ]
    assert "skipped 1 query with no relevant document in split 'test'" in test.stderr
    assert "check it: retrieval-eval validate out/hybrid.jsonl --corpus out/documents.jsonl" in (
        test.stderr
    )
    assert _ids(tmp_path / "out" / "hybrid.jsonl") == ["q1", "q2"]
    assert dev.returncode == 0, dev.stderr
    assert _ids(tmp_path / "dev" / "keyword.jsonl") == ["q2"]
    assert not (tmp_path / "dev" / "hybrid.jsonl").exists()
    assert "skipped" not in dev.stderr


def test_import_beir_keeps_files_without_force_and_needs_out(
    tmp_path: Path, beir_folder: Path
) -> None:
    assert retrieval_eval("import", "beir", "mini", "--out", "out", cwd=tmp_path).returncode == 0

    again = retrieval_eval("import", "beir", "mini", "--out", "out", cwd=tmp_path)
    forced = retrieval_eval("import", "beir", "mini", "--out", "out", "--force", cwd=tmp_path)
    no_out = retrieval_eval("import", "beir", "mini", cwd=tmp_path)

    assert again.returncode == 2
    assert "out/documents.jsonl: already exists; pass --force" in again.stderr
    assert forced.returncode == 0, forced.stderr
    assert no_out.returncode == 2
    assert "Missing option '--out'" in no_out.stderr


def test_import_queries_flags_reach_the_import_and_it_says_what_it_wrote(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    (project.root / "log.csv").write_text("query\nlemon tart\nkyoto\n", encoding="utf-8")

    done = retrieval_eval(
        "import", "queries", "log.csv", "--retriever", "bm25", "--top", "2", "--out", "cand.jsonl",
        "--corpus", "datasets/corpus/travel",
        cwd=tmp_path,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "read 2 log records (2 queries sent, 2 distinct); wrote 1 candidate fixtures to "
        "cand.jsonl (0 labelled by clicks, 1 by bm25's top 2)\n"
    )
    # --corpus over the config's: only the travel notes, so "lemon tart" finds nothing.
    candidates = [json.loads(x) for x in (tmp_path / "cand.jsonl").read_text().splitlines()]
    assert [(c["query"], c["expected_top_k_ids"]) for c in candidates] == [("kyoto", ["kyoto"])]
    assert "skipped 1 query with no click in the corpus and no hit" in done.stderr
    assert "next: retrieval-eval review cand.jsonl" in done.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--force", "--append"), "--force replaces the file and --append adds to it: pick one"),
        (("--redact-pattern", "x"), "--redact-pattern needs --redact"),
        (("--redact", "--redact-pattern", "("), "--redact-pattern #1 '(' is not a regex"),
        (("--top", "21"), "Invalid value for '--top'"),
    ],
    ids=["force-and-append", "pattern-without-redact", "bad-regex", "top-out-of-range"],
)
def test_import_queries_usage_errors_name_the_flag(
    tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    (tmp_path / "log.csv").write_text("query\nlemon tart\n", encoding="utf-8")

    done = retrieval_eval("import", "queries", "log.csv", "--out", "c.jsonl", *flags, cwd=tmp_path)

    assert done.returncode == 2
    assert message in done.stderr
    assert not (tmp_path / "c.jsonl").exists()
