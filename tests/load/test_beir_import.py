"""``retrieval-eval import beir``: Cranfield round-trips through our own formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.cli import main
from retrieval_eval.load.beir import load_beir
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.validate import validate_datasets


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(args)
    captured = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def test_cranfield_round_trips(
    cranfield_beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "golden"
    code, out, _ = run(
        ["import", "beir", str(cranfield_beir), "--split", "test", "--out", str(out_dir)], capsys
    )

    assert code == 0
    assert out == (
        f"wrote {out_dir / 'documents.jsonl'} (1,400 documents)\n"
        f"wrote {out_dir / 'hybrid.jsonl'} (225 fixtures, 1,612 judgments)\n"
    )
    corpus = load_corpus(out_dir / "documents.jsonl")
    assert len(corpus.documents) + len(corpus.skipped_empty) == 1400
    report = validate_datasets([out_dir], corpus=corpus)
    assert report.problems == []
    fixtures = [located.fixture for located in report.datasets[out_dir / "hybrid.jsonl"]]
    assert len(fixtures) == 225
    assert {f.ground_truth_source for f in fixtures} == {"human-annotated"}
    assert {f.retrieval_type for f in fixtures} == {"hybrid"}

    original = load_beir(cranfield_beir, "test")
    assert {f.query_id: f.query for f in fixtures} == original.queries
    assert {f.query_id: f.grades() for f in fixtures} == original.qrels
    assert sum(len(f.grades()) for f in fixtures) == 1612
    # Best grade first, so the ordered list reads like a ranking.
    first = fixtures[0]
    assert [first.grades()[i] for i in first.expected_top_k_ids] == sorted(
        first.grades().values(), reverse=True
    )
    assert {d.id: d.text for d in corpus.documents} == {
        d.id: d.text for d in original.corpus.documents
    }


def test_existing_files_are_kept_unless_forced(
    cranfield_beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "keyword.jsonl"
    target.write_text("mine\n", encoding="utf-8")
    args = [
        "import",
        "beir",
        str(cranfield_beir),
        "--out",
        str(tmp_path),
        "--retrieval-type",
        "keyword",
    ]

    code, _, err = run(args, capsys)
    assert (code, err) == (2, f"error: {target}: already exists; pass --force to overwrite it\n")
    assert target.read_text(encoding="utf-8") == "mine\n"

    code, _, _ = run([*args, "--force"], capsys)
    assert code == 0
    assert target.read_text(encoding="utf-8").startswith(
        '{"query_id": "1", "query": "what similarity laws'
    )


def test_binary_qrels_need_no_relevance_map(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n', encoding="utf-8"
    )
    (beir / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "x"}\n{"_id": "q2", "text": "y"}\n', encoding="utf-8"
    )
    (beir / "qrels" / "test.tsv").write_text("q1\td2\t1\nq1\td1\t1\nq2\td1\t0\n", encoding="utf-8")

    code, _, err = run(["import", "beir", str(beir), "--out", str(tmp_path / "out")], capsys)

    assert code == 0
    assert "skipped 1 query with no relevant document in split 'test'" in err
    assert (tmp_path / "out" / "hybrid.jsonl").read_text(encoding="utf-8") == (
        '{"query_id": "q1", "query": "x", "retrieval_type": "hybrid", '
        '"expected_top_k_ids": ["d2", "d1"], '
        '"ground_truth_source": "human-annotated"}\n'
    )
