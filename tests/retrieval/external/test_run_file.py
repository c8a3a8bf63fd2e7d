"""`run-file`: a precomputed run scored through `retrieval-eval beir`."""

from __future__ import annotations

import gzip
import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.retrieval.external.run_file import TrecRun, parse_jsonl_run
from tests.retrieval.service_helpers import REPO, beir_json, run_cli, tiny_beir

# q1 perfect (d1, d3), q2 finds d4 second, q3 finds nothing relevant; q4–q6 are absent.
TREC_RUN = """\
q1 Q0 d1 1 2.5 nightly
q1 Q0 d3 2 1.5 nightly
q2 Q0 d1 1 0.9 nightly
q2 Q0 d4 2 0.8 nightly
q3 Q0 d4 1 0.1 nightly
"""


def _config(tmp_path: Path, run: Path | str, fmt: str) -> Path:
    config = tmp_path / "retrieval-eval.toml"
    config.write_text(f'[retrievers.run-file]\npath = "{run}"\nformat = "{fmt}"\n')
    return config


def _beir_run_file(
    tiny: Path, config: Path, *extra: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`retrieval-eval beir TINY --retriever run-file --config CONFIG [extra]`."""
    return run_cli(
        "beir", str(tiny), "--retriever", "run-file", "--config", str(config), *extra, cwd=cwd
    )


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return tiny_beir(tmp_path / "tiny")


def test_a_trec_run_is_scored_and_missing_queries_are_counted(tmp_path: Path, tiny: Path) -> None:
    run = tmp_path / "nightly.trec"
    run.write_text(TREC_RUN)
    # The path in the file is relative to where the command runs (like `run`).
    done = _beir_run_file(
        tiny, _config(tmp_path, "nightly.trec", "trec"), "--json", "out.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out.json").read_text())
    assert summary["num_queries"] == 6
    assert summary["queries_missing"] == 3
    # MRR@10: q1 1, q2 1/2, q3 0, q4–q6 0 (missing = empty) → 1.5 / 6.
    assert summary["mrr@10"] == pytest.approx(1.5 / 6)
    assert summary["config"] == {"retriever": "run-file", "path": "nightly.trec", "format": "trec"}


def test_a_jsonl_run_gives_the_same_numbers_as_the_trec_one(tmp_path: Path, tiny: Path) -> None:
    trec, jsonl = tmp_path / "run.trec", tmp_path / "run.jsonl"
    trec.write_text(TREC_RUN)
    by_query: dict[str, list[dict[str, object]]] = {}
    for line in TREC_RUN.splitlines():
        qid, _, doc, _, score, _ = line.split()
        by_query.setdefault(qid, []).append({"id": doc, "score": float(score)})
    jsonl.write_text(
        "".join(json.dumps({"query_id": q, "hits": h}) + "\n" for q, h in by_query.items())
    )
    first = beir_json(tiny, "run-file", tmp_path / "a.json", config=_config(tmp_path, trec, "trec"))
    (tmp_path / "b").mkdir()
    second = beir_json(
        tiny, "run-file", tmp_path / "b.json", config=_config(tmp_path / "b", jsonl, "jsonl")
    )
    for measure in ("ndcg@10", "mrr@10", "p@5", "recall@100", "map", "queries_missing"):
        assert first[measure] == second[measure]


def test_a_gzipped_run_gives_the_plain_files_numbers(tmp_path: Path, tiny: Path) -> None:
    plain, packed = tmp_path / "run.trec", tmp_path / "g" / "run.trec.gz"
    plain.write_text(TREC_RUN)
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(TREC_RUN.encode()))
    first = beir_json(
        tiny, "run-file", tmp_path / "a.json", config=_config(tmp_path, plain, "trec")
    )
    second = beir_json(
        tiny, "run-file", tmp_path / "b.json", config=_config(packed.parent, packed, "trec")
    )
    for measure in ("ndcg@10", "mrr@10", "map", "queries_missing"):
        assert first[measure] == second[measure]

    packed.write_bytes(gzip.compress(TREC_RUN.encode())[:-12])  # cut short in transfer
    done = _beir_run_file(tiny, _config(packed.parent, packed, "trec"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "run.trec.gz:1: cannot read the file" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_broken_line_is_reported_with_file_and_line(tmp_path: Path, tiny: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 2.5 x\nq1 Q0 d3 2 high x\n")
    done = _beir_run_file(tiny, _config(tmp_path, run, "trec"))
    assert done.returncode == 2
    assert done.stderr == f"error: {run}:2: score 'high' is not a number\n"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("q1 Q0 d3 2nd 1.5 x", "rank '2nd' is not an integer"),
        ("q1 Q0 d3 2 inf x", "score 'inf' is not finite"),
        ("q1 Q0 d3 2 1.5 x extra", "expected 6 whitespace-separated fields"),
    ],
)
def test_a_bad_rank_score_or_column_count_names_its_line(
    tmp_path: Path, tiny: Path, line: str, message: str
) -> None:
    run = tmp_path / "run.trec"
    run.write_text(f"q1 Q0 d1 1 2.5 x\n\n{line}\n")
    done = _beir_run_file(tiny, _config(tmp_path, run, "trec"))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {run}:3: {message}"), done.stderr


def test_a_missing_file_fails_before_any_query(tmp_path: Path, tiny: Path) -> None:
    config = _config(tmp_path, tmp_path / "absent.trec", "trec")
    done = _beir_run_file(tiny, config)
    assert done.returncode == 2
    assert "retrievers.run-file.path: no such file" in done.stderr
    assert done.stdout == ""


_ids = st.text(alphabet="abcdefghij0123456789-_/", min_size=1, max_size=8)
_scores = st.floats(allow_nan=False, allow_infinity=False, width=32)


@given(st.dictionaries(_ids, st.dictionaries(_ids, _scores, max_size=6), max_size=5))
def test_trec_and_jsonl_parsers_read_back_what_was_written(
    run: dict[str, dict[str, float]],
) -> None:
    trec = "".join(
        f"{qid} Q0 {doc} {rank} {score!r} tag\n"
        for qid, docs in run.items()
        for rank, (doc, score) in enumerate(docs.items(), start=1)
    )
    jsonl = "".join(
        json.dumps({"query_id": qid, "hits": [{"id": d, "score": s} for d, s in docs.items()]})
        + "\n"
        for qid, docs in run.items()
    )
    expected = {qid: docs for qid, docs in run.items() if docs}
    parsed_trec = _read_trec(trec)
    assert {q: {h.doc_id: h.score for h in hits} for q, hits in parsed_trec.items()} == expected
    parsed_jsonl = parse_jsonl_run(jsonl, file=Path("run.jsonl"))
    assert {q: {h.doc_id: h.score for h in hits} for q, hits in parsed_jsonl.items() if hits} == (
        expected
    )


def _read_trec(text: str) -> dict[str, list[object]]:
    """Every query's hits, as the run-file retriever reads the text from a file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.trec"
        path.write_text(text, encoding="utf-8")
        run = TrecRun(path)
        ids = [line.split()[0] for line in text.splitlines() if len(line.split()) == 6]
        return dict(run.hits(ids))  # type: ignore[arg-type]


@given(st.text(max_size=200))
def test_the_parsers_take_any_text_without_crashing(text: str) -> None:
    for parse in (_read_trec, lambda text: parse_jsonl_run(text, file=Path("run"))):
        try:
            parse(text)
        except InputError as error:
            assert error.line is not None


def test_run_gates_a_run_file_and_counts_missing_queries_in_the_report(tmp_path: Path) -> None:
    """`retrieval-eval run` on this repository's datasets with every fixture answered from
    a run file: the expected documents for all fixtures but the first three, which are left
    out. A tag filter on a fixture drops hits outside its tags."""
    fixtures = [
        json.loads(line)
        for dataset in sorted((REPO / "datasets").glob("*.jsonl"))
        for line in dataset.read_text(encoding="utf-8").splitlines()
    ]
    answered = fixtures[3:]
    lines = [
        f"{f['query_id']} Q0 {doc} {rank} {10 - rank} nightly"
        for f in answered
        for rank, doc in enumerate(f.get("expected_top_k_ids") or [], start=1)
    ]
    # A hit outside the corpus's tags for a tag-filtered fixture is dropped, not ranked.
    tagged = next(f for f in answered if f.get("filters") and f.get("expected_top_k_ids"))
    lines.append(f"{tagged['query_id']} Q0 untagged/nowhere 0 99 nightly")
    (tmp_path / "nightly.trec").write_text("\n".join(lines) + "\n")
    (tmp_path / "retrieval-eval.toml").write_text(
        '[dataset_retrievers]\n"semantic.jsonl" = "run-file"\n"keyword.jsonl" = "run-file"\n'
        '"hybrid.jsonl" = "run-file"\n\n[retrievers.run-file]\npath = "nightly.trec"\n'
    )
    done = run_cli(
        "run",
        "--datasets",
        str(REPO / "datasets"),
        "--corpus",
        str(REPO / "datasets" / "corpus"),
        "--baseline",
        str(tmp_path / "baseline.json"),
        "--report-dir",
        str(tmp_path / "report"),
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    missing = {d["name"]: d["queries_missing"] for d in report["datasets"]}
    # Left out: the first three, and the fixtures expecting no result (no line to write).
    in_file = {line.split()[0] for line in lines}
    assert sum(missing.values()) == sum(f["query_id"] not in in_file for f in fixtures)
    assert missing["hybrid.jsonl"] >= 3
    assert all(d["retriever_config"]["retriever"] == "run-file" for d in report["datasets"])
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "queries are missing from the run file; they count as empty results." in markdown
    ranked = {q["query_id"]: q for d in report["datasets"] for q in d["queries"]}
    assert "untagged/nowhere" not in json.dumps(ranked[tagged["query_id"]])


@pytest.mark.parametrize("fmt", ["trec", "jsonl"])
def test_a_byte_order_mark_is_not_part_of_the_first_query_id(
    tmp_path: Path, tiny: Path, fmt: str
) -> None:
    """Read as plain UTF-8, the BOM made the first line's query '\ufeffq1': its hits went
    to a query nobody asked, and q1 scored lower (or counted as missing)."""
    if fmt == "trec":
        text = TREC_RUN
    else:
        text = "".join(
            json.dumps({"query_id": q, "hits": [{"id": d, "score": 1.0}]}) + "\n"
            for q, d in (("q1", "d1"), ("q2", "d4"))
        )
    summaries = []
    for name, prefix in (("plain", b""), ("bom", b"\xef\xbb\xbf")):
        run = tmp_path / f"{name}.{fmt}"
        run.write_bytes(prefix + text.encode())
        (tmp_path / name).mkdir()
        config = _config(tmp_path / name, run, fmt)
        summary = beir_json(tiny, "run-file", tmp_path / f"{name}.json", config=config)
        summaries.append({m: summary[m] for m in ("ndcg@10", "mrr@10", "map", "queries_missing")})
    assert summaries[0] == summaries[1]
    assert summaries[0]["mrr@10"] > 0


_texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(st.dictionaries(_ids, st.lists(st.tuples(_ids, _texts), max_size=4), max_size=4))
def test_jsonl_hit_texts_with_any_characters_read_back(
    run: dict[str, list[tuple[str, str]]],
) -> None:
    """JSON lets U+2028, U+2029 and U+0085 stand unescaped in a string; splitting lines with
    str.splitlines() broke such a line in two ("not JSON (Unterminated string ...)")."""
    jsonl = "".join(
        json.dumps(
            {"query_id": q, "hits": [{"id": d, "score": 1, "text": t} for d, t in hits]},
            ensure_ascii=False,
        )
        + "\r\n"
        for q, hits in run.items()
    )
    parsed = parse_jsonl_run(jsonl, file=Path("run.jsonl"))
    assert {q: [(h.doc_id, h.text) for h in hits] for q, hits in parsed.items()} == run
