"""TREC and BEIR files as ``retrieval-eval trec`` reads them."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CLI = Path(sys.executable).with_name("retrieval-eval")


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), "trec", *map(str, args)], capture_output=True, text=True, check=False
    )


def test_beir_qrels_with_their_header_score_as_the_trec_qrels(
    cranfield_beir: Path, tmp_path: Path
) -> None:
    """BEIR's qrels/test.tsv (query-id corpus-id score, with that header) was refused:
    "expected 4 whitespace-separated fields"."""
    beir_qrels = cranfield_beir / "qrels" / "test.tsv"
    rows = [line.split("\t") for line in beir_qrels.read_text().splitlines()[1:]]
    trec_qrels = tmp_path / "qrels.txt"
    trec_qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    run = tmp_path / "run.txt"
    run.write_text(
        "".join(f"{q} Q0 {d} {i + 1} {100 - i} t\n" for i, (q, d, _) in enumerate(rows[::3]))
    )
    want = run_cli("-q", "-m", "all_trec", trec_qrels, run)
    got = run_cli("-q", "-m", "all_trec", beir_qrels, run)
    assert want.returncode == 0, want.stderr
    assert (got.returncode, got.stderr) == (0, "")
    assert got.stdout == want.stdout
    gzipped = tmp_path / "test.tsv.gz"
    gzipped.write_bytes(gzip.compress(beir_qrels.read_bytes()))
    assert run_cli("-q", "-m", "all_trec", gzipped, run).stdout == want.stdout


def test_a_short_line_in_beir_qrels_names_the_beir_layout(tmp_path: Path) -> None:
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n1\ta\t1\n1\tb\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 t\n")
    done = run_cli(tmp_path / "qrels.tsv", tmp_path / "run")
    assert done.returncode == 2
    assert "qrels.tsv:3: expected 3 whitespace-separated fields (query-id corpus-id score)" in (
        done.stderr
    )


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from("123"), st.sampled_from("abcdef"), st.integers(-1, 3)),
        min_size=1,
        max_size=15,
        unique_by=lambda row: row[:2],
    ),
    separator=st.sampled_from(["\t", " ", "  "]),
    header=st.sampled_from(["query-id\tcorpus-id\tscore", "QUERY-ID corpus-id Score"]),
)
def test_any_beir_qrels_reads_as_its_trec_twin(
    tmp_path: Path, rows: list[tuple[str, str, int]], separator: str, header: str
) -> None:
    beir = tmp_path / "beir.tsv"
    beir.write_text(header + "\n" + "".join(separator.join(map(str, r)) + "\n" for r in rows))
    trec = tmp_path / "trec.txt"
    trec.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    run = tmp_path / "run"
    run.write_text("".join(f"{q} Q0 {d} 1 {i} t\n" for i, (q, d, _) in enumerate(rows)))
    want = run_cli("-q", "-m", "all_trec", trec, run)
    got = run_cli("-q", "-m", "all_trec", beir, run)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)


@pytest.mark.slow
def test_a_scattered_run_of_more_than_65536_queries_scores_as_its_sorted_twin(
    tmp_path: Path,
) -> None:
    """Lines of over 2**16 queries are regrouped by a two-pass radix sort of the query
    numbers (low half, then high half); every line must land with its own query."""
    queries = 70_000
    lines = [f"q{q} Q0 d{q}-{k} {k + 1} 1.5 t\n" for q in range(queries) for k in range(3)]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{q}-{q % 3} {1 + q % 2}\n" for q in range(queries)))
    sorted_run, scattered_run = tmp_path / "sorted.txt", tmp_path / "scattered.txt"
    sorted_run.write_text("".join(lines))
    order = list(range(len(lines)))
    order.sort(key=lambda i: ((i * 7919) % len(lines), i))
    scattered_run.write_text("".join(lines[i] for i in order))
    want = run_cli("-q", "-m", "map", "-m", "relstring", qrels, sorted_run)
    got = run_cli("-q", "-m", "map", "-m", "relstring", qrels, scattered_run)
    assert want.returncode == 0, want.stderr
    assert (got.returncode, got.stderr) == (0, "")
    assert got.stdout == want.stdout
