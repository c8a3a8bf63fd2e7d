"""``retrieval-eval validate`` through the real entry point: output, annotations, exit codes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.validate.dataset_builders import fixture, full_dataset, line, write_dataset

CONSOLE_SCRIPT = Path(sys.executable).with_name("retrieval-eval")


def run(args: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """The console script in its own process, as a user runs it, with this test's
    environment (GITHUB_ACTIONS as the test sets it) and no API keys. By default it runs in
    an empty folder: in a folder with a configuration file, `validate` checks the ids
    against the corpus that file names."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    with tempfile.TemporaryDirectory() as empty:
        done = subprocess.run(
            [str(CONSOLE_SCRIPT), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd or empty,
            check=False,
        )
    return done.returncode, done.stdout, done.stderr


def test_valid_folder_exits_0(
    tmp_path: Path,
) -> None:
    full_dataset(tmp_path / "semantic.jsonl", "semantic")
    full_dataset(tmp_path / "keyword.jsonl", "keyword")

    code, out, err = run(["validate", str(tmp_path)])
    assert (code, out) == (0, "")
    ok, *resolution = err.splitlines()
    assert ok == "ok: 2 files, 40 fixtures"
    # Then what each dataset can resolve (known once a baseline records its spread).
    assert [line.split(": ")[:2] for line in resolution] == [
        ["resolution", "semantic.jsonl"],
        ["resolution", "keyword.jsonl"],
    ]


def test_validate_says_what_each_dataset_can_resolve_from_the_baselines_spread(
    tmp_path: Path,
) -> None:
    full_dataset(tmp_path / "keyword.jsonl", "keyword")
    values = [0.2, 1.0, 0.5, 0.0] * 5
    queries = {
        f"q{i}": {"query": "q", "metrics": {"ndcg@10": value}} for i, value in enumerate(values)
    }
    entry = {"aggregates": {"ndcg@10": sum(values) / len(values)}, "queries": queries}
    baseline = {"schema_version": 1, "datasets": {"keyword.jsonl": entry}}
    (tmp_path / "baseline.json").write_text(json.dumps(baseline), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "validate", "keyword.jsonl"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "resolution: keyword.jsonl: 20 queries: this gate catches a drop in NDCG@10 of ≥ " in (
        done.stderr
    )
    assert "four times in five; ≈ " in done.stderr and "queries would resolve 5%" in done.stderr

    (tmp_path / "baseline.json").unlink()
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "validate", "keyword.jsonl"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert "resolution: keyword.jsonl: known after the first run measures it" in done.stderr


def test_problems_exit_1_and_become_annotations_on_github(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = full_dataset(tmp_path / "semantic.jsonl", "semantic")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line(fixture("sem-021", query="", colour="red, 100%")))
    before = (path.read_bytes(), path.stat().st_mtime_ns)

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, err = run(["validate", str(path)])

    escaped = str(path).replace(":", "%3A").replace(",", "%2C")
    assert code == 1
    assert out.splitlines() == [
        f"{path}:21: field 'query': must not be empty or blank (got \"\")",
        f"::error file={escaped},line=21::field 'query': must not be empty or blank (got \"\")",
        f"{path}:21: unknown field 'colour'; allowed fields are answer_context, expect_empty, "
        "expected_keywords, expected_top_k_ids, filters, ground_truth_source, minimum_mrr, query, "
        "query_id, query_type, relevance, retrieval_type, tags",
        f"::error file={escaped},line=21::unknown field 'colour'; allowed fields are "
        "answer_context, "
        "expect_empty, expected_keywords, expected_top_k_ids, filters, ground_truth_source, "
        "minimum_mrr, query, query_id, query_type, relevance, retrieval_type, tags",
    ]
    assert err == "2 problems in 1 file\n"
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before  # never modifies a file


def test_no_annotations_outside_github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    path = write_dataset(tmp_path / "hybrid.jsonl", [line(fixture("h1", "hybrid"))])
    code, out, _ = run(["validate", str(path), "--min-fixtures", "2", "--min-human", "0"])
    assert (code, out) == (1, f"{path}:1: 1 valid fixtures; at least 2 are required\n")


def test_missing_path_exits_2(
    tmp_path: Path,
) -> None:
    code, out, err = run(["validate", str(tmp_path / "nope")])
    assert (code, out, err) == (2, "", f"error: {tmp_path / 'nope'}: no such file or folder\n")


def test_unreadable_dataset_file_exits_2(
    tmp_path: Path,
) -> None:
    (tmp_path / "semantic.jsonl").mkdir()  # exists, cannot be read as a file (root reads any file)
    code, _, err = run(["validate", str(tmp_path)])
    assert (code, err) == (
        2,
        f"error: {tmp_path / 'semantic.jsonl'}: cannot read file: Is a directory\n",
    )


def test_missing_corpus_exits_2(
    tmp_path: Path,
) -> None:
    path = full_dataset(tmp_path / "semantic.jsonl", "semantic")
    code, _, err = run(["validate", str(path), "--corpus", str(tmp_path / "notes")])
    assert (code, err) == (2, f"error: {tmp_path / 'notes'}: corpus path does not exist\n")


def test_corpus_ids_checked_and_empty_notes_warned(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "doc-a.md").write_text("# A\nbody #x\n", encoding="utf-8")
    (notes / "blank.md").write_text("\n", encoding="utf-8")
    path = write_dataset(
        tmp_path / "d" / "semantic.jsonl",
        [line(fixture("q1")), line(fixture("q2", expected_top_k_ids=["doc-b"]))],
    )
    code, out, err = run(
        ["validate", str(path), "--corpus", str(notes), "--min-fixtures", "0", "--min-human", "0"],
    )
    assert code == 1
    assert (
        out
        == f"{path}:2: expected id 'doc-b' is not in the corpus ({notes}); did you mean 'doc-a'?\n"
    )
    assert err == f"warning: {notes}: skipped 1 empty document: blank\n1 problem in 1 file\n"


def test_a_utf16_dataset_is_one_problem_and_a_utf16_corpus_an_error(tmp_path: Path) -> None:
    """PowerShell's `>` writes UTF-16; such a dataset was once reported as invalid UTF-8
    on its first line and "not valid JSON: Expecting value" on every other line."""
    dataset = tmp_path / "hybrid.jsonl"
    rows = [line(fixture(f"q{i}", "hybrid")) for i in range(3)]
    dataset.write_bytes("".join(rows).replace("\n", "\r\n").encode("utf-16"))
    code, out, err = run(["validate", str(dataset), "--min-fixtures", "0", "--min-human", "0"])
    assert (code, err) == (1, "1 problem in 1 file\n")
    assert out == (
        f"{dataset}:1: the file is UTF-16 text (it starts with a UTF-16 byte-order mark); "
        "save it as UTF-8 (in PowerShell: Out-File -Encoding utf8)\n"
    )
    dataset.write_text("".join(rows))
    corpus = tmp_path / "documents.jsonl"
    corpus.write_bytes('{"id": "d1", "title": "", "text": "x"}\n'.encode("utf-16"))
    code, out, err = run(["validate", str(dataset), "--corpus", str(corpus)])
    assert (code, out) == (2, "")
    assert err == (
        f"error: {corpus}:1: the file is UTF-16 text (it starts with a UTF-16 byte-order "
        "mark); save it as UTF-8 (in PowerShell: Out-File -Encoding utf8)\n"
    )


def test_a_gzipped_jsonl_corpus_is_read(tmp_path: Path) -> None:
    """documents.jsonl.gz was "unsupported corpus: expected a .jsonl file, ..." (exit 2)."""
    dataset = tmp_path / "hybrid.jsonl"
    dataset.write_text(line(fixture("q1", "hybrid", expected_top_k_ids=["d1"])))
    corpus = tmp_path / "documents.jsonl.gz"
    corpus.write_bytes(gzip.compress(b'{"id": "d1", "title": "", "text": "x"}\n'))
    args = ["validate", str(dataset), "--corpus", str(corpus), "--min-fixtures", "0"]
    assert run([*args, "--min-human", "0"]) == (
        0,
        "",
        "ok: 1 file, 1 fixtures\nresolution: hybrid.jsonl: known after the first run measures it\n",
    )
    corpus.write_bytes(gzip.compress(b'{"id": "d2", "title": "", "text": "x"}\n'))
    code, out, _ = run([*args, "--min-human", "0"])
    assert code == 1
    assert "expected id 'd1' is not in the corpus" in out


def test_a_grade_beyond_64_bits_is_a_problem_not_a_crash_in_run(tmp_path: Path) -> None:
    """It passed validation, and `run` then stopped with "unexpected OverflowError ...
    a bug in retrieval-eval" when the grades became an int64 array."""
    dataset = tmp_path / "hybrid.jsonl"
    grade = 2**63
    dataset.write_text(line(fixture("q1", "hybrid", relevance={"doc-a": grade})))
    code, out, _ = run(["validate", str(dataset), "--min-fixtures", "0", "--min-human", "0"])
    assert (code, out) == (
        1,
        f"{dataset}:1: field 'relevance.doc-a': input should be less than or equal to "
        f"{grade - 1} (got {grade})\n",
    )


def test_output_piped_into_head_stops_quietly(tmp_path: Path) -> None:
    """`retrieval-eval validate datasets | head` once ended with "error: code run by
    retrieval-eval asked the process to exit (sys.exit(1)), e.g. a retriever factory":
    click turns the broken pipe into sys.exit(1), which read as user code exiting."""
    dataset = tmp_path / "hybrid.jsonl"
    dataset.write_text("{bad\n" * 6000)  # ~500 kB of problems: more than a pipe holds
    process = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "validate", str(dataset)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,  # no configuration file here, so no corpus to announce
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(f"{dataset}:1: not valid JSON")
    process.stdout.close()  # what `head -1` does after its line
    stderr = process.stderr.read()
    assert (process.wait(), stderr) == (2, "")


@pytest.mark.parametrize("content", ["", "\n  \r\n\n"])
def test_an_empty_corpus_file_is_an_error_not_a_corpus_without_documents(
    tmp_path: Path, content: str
) -> None:
    """An empty documents.jsonl (a failed export, a wrong path) loaded as a corpus of nothing:
    `run` then established a baseline from it, and validate blamed every expected id."""
    dataset = tmp_path / "hybrid.jsonl"
    dataset.write_text(line(fixture("q1", "hybrid")))
    corpus = tmp_path / "documents.jsonl"
    corpus.write_text(content)
    code, out, err = run(["validate", str(dataset), "--corpus", str(corpus)])
    assert (code, out) == (2, "")
    assert err == (
        f'error: {corpus}: no documents in this file; a corpus file holds one {{"id", "title", '
        '"text"} object per line\n'
    )


def test_without_corpus_the_ids_are_checked_against_the_configured_corpus(
    tmp_path: Path,
) -> None:
    """A misspelt id once passed `validate datasets` and failed only with `--corpus`."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "doc-a.md").write_text("# A\n\nalpha\n")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "notes"\n')
    full_dataset(tmp_path / "datasets" / "semantic.jsonl", "semantic")
    full_dataset(tmp_path / "datasets" / "keyword.jsonl", "keyword")
    good = run(["validate", "datasets"], cwd=tmp_path)
    with (tmp_path / "datasets" / "keyword.jsonl").open("a") as handle:
        handle.write(line(fixture("kw-typo", "keyword", expected_top_k_ids=["doc-b"])))

    code, out, err = run(["validate", "datasets"], cwd=tmp_path)

    assert good == (
        0,
        "",
        "checking expected ids against the configured corpus notes (--corpus to name another)\n"
        "ok: 2 files, 40 fixtures\n"
        "resolution: semantic.jsonl: known after the first run measures it\n"
        "resolution: keyword.jsonl: known after the first run measures it\n",
    )
    assert code == 1
    assert out == (
        "datasets/keyword.jsonl:21: expected id 'doc-b' is not in the corpus (notes); "
        "did you mean 'doc-a'?\n"
    )
    assert err.endswith("1 problem in 1 file of the 2 files validated\n")
