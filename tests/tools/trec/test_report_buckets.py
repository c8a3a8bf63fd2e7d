"""A run whose queries' lines are scattered is scored a bucket of queries at a time.

The buckets must not show: the output is byte-identical to the whole-file path's
and to the same run's in trec_eval order, whatever the bucket, piece and read-block
sizes (buckets that double their queries included), and errors name the same line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.tools.trec.report import as_json, format_trec, score_trec_run
from retrieval_eval.tools.trec.text import files as trec_files
from retrieval_eval.tools.trec.text import tokens as trec_tokens
from tests.tools.trec.id_strategies import DOC_IDS, QUERY_IDS, SCORES

CLI = Path(sys.executable).with_name("retrieval-eval")
MEASURES = ("all_trec",)


def _outputs(qrels: Path, run: Path, **options: object) -> tuple[str, str] | str:
    try:
        result = score_trec_run(qrels, run, MEASURES, **options)  # type: ignore[arg-type]
    except InputError as error:  # the same message on every path
        return str(error).replace(str(run), "RUN")
    return format_trec(result, per_query=True), json.dumps(as_json(result, per_query=True))


def _write_runs(folder: Path, queries: int, depth: int, seed: int) -> tuple[Path, Path, Path]:
    """(qrels, run in trec_eval order, the same lines shuffled, the last line kept last)."""
    rng = np.random.default_rng(seed)
    lines: list[str] = []
    judgments: list[str] = []
    for q in range(queries):
        count = int(rng.integers(1, depth + 1))
        docs = [f"d{j}" for j in rng.choice(3 * depth, size=count, replace=False)]
        scores = rng.integers(0, 4, size=count) / 2  # ties, broken by id descending
        ranked = sorted(zip(scores.tolist(), docs, strict=True), key=lambda t: t[1], reverse=True)
        ranked.sort(key=lambda t: -t[0])
        lines += [f"q{q} Q0 {doc} 0 {score} tag\n" for score, doc in ranked]
        judgments += [f"q{q} 0 {doc} {rng.integers(-1, 3)}\n" for doc in docs if rng.random() < 0.5]
    judgments.append("unretrieved 0 d1 1\n")
    (folder / "qrels").write_text("".join(judgments))
    (folder / "sorted").write_text("".join(lines))
    order = rng.permutation(len(lines) - 1)  # trec_eval prints the last line's tag
    (folder / "shuffled").write_text("".join(lines[i] for i in order) + lines[-1])
    return folder / "qrels", folder / "sorted", folder / "shuffled"


def _console_trec(qrels: Path, run: str, stdin: str | None = None) -> str:
    """What `retrieval-eval trec -q -m all_trec QRELS RUN` prints (it must succeed)."""
    done = subprocess.run(
        [str(CLI), "trec", "-q", "-m", "all_trec", str(qrels), run],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_console_script_prints_a_shuffled_run_of_many_buckets_as_in_order(
    tmp_path: Path,
) -> None:
    """More queries than one bucket holds: several buckets, each its own piece."""
    queries = 3 * trec_files.BUCKET_QUERIES + 17
    qrels, ordered, shuffled = _write_runs(tmp_path, queries, 8, seed=5)
    outputs = [_console_trec(qrels, str(run)) for run in (ordered, shuffled)]
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\tq") > queries  # per-query lines of every query


@pytest.mark.parametrize(("bucket_queries", "piece_rows"), [(1, 1), (2, 10), (7, 1 << 30)])
def test_buckets_that_double_their_queries_print_what_the_whole_file_path_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bucket_queries: int, piece_rows: int
) -> None:
    """Past MAX_BUCKETS buckets, each doubles its queries while the file is read."""
    monkeypatch.setattr(trec_files, "MAX_BUCKETS", 4)
    monkeypatch.setattr(trec_tokens, "BLOCK_BYTES", 64)  # queries arrive over many blocks
    qrels, ordered, shuffled = _write_runs(tmp_path, 90, 6, seed=bucket_queries)
    whole = _outputs(qrels, shuffled, in_pieces=False)
    options = {"bucket_queries": bucket_queries, "piece_rows": piece_rows}
    assert _outputs(qrels, shuffled, **options) == whole
    assert _outputs(qrels, ordered, **options) == whole
    for extra in ({"max_docs": 3}, {"level": 2}):
        assert _outputs(qrels, shuffled, **options, **extra) == _outputs(
            qrels, shuffled, in_pieces=False, **extra
        )


def test_an_error_in_a_bucketed_run_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n2 0 b 1\n3 0 c 1\n")
    lines = ["1 Q0 a 1 3 t\n", "2 Q0 b 1 3 t\n", "1 Q0 x 2 2 t\n", "3 Q0 c 1 3 t\n"]
    (tmp_path / "run").write_text("".join(lines) + "2 Q0 b 2 1 t\n")
    with pytest.raises(InputError) as caught:
        score_trec_run(tmp_path / "qrels", tmp_path / "run", ("map",), bucket_queries=1)
    assert caught.value.line == 5
    assert "appears twice for query '2'" in str(caught.value)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.tuples(QUERY_IDS, DOC_IDS, SCORES), min_size=1, max_size=30),
    judged=st.dictionaries(
        st.tuples(QUERY_IDS, DOC_IDS), st.integers(-1, 3), min_size=1, max_size=25
    ),
    bucket_queries=st.integers(1, 4),
    max_buckets=st.integers(1, 3),
    piece_rows=st.integers(1, 12),
    block=st.integers(24, 200),
    max_docs=st.none() | st.integers(1, 4),
)
def test_random_scattered_runs_in_random_buckets_print_what_the_whole_file_path_prints(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lines: list[tuple[str, str, str]],
    judged: dict[tuple[str, str], int],
    bucket_queries: int,
    max_buckets: int,
    piece_rows: int,
    block: int,
    max_docs: int | None,
) -> None:
    """Any line order, repeated documents (an error) included."""
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in judged.items()))
    run = tmp_path / "run"
    run.write_text("".join(f"{q} Q0 {d} 0 {s} t{q}\n" for q, d, s in lines))
    whole = _outputs(qrels, run, in_pieces=False, max_docs=max_docs)
    monkeypatch.setattr(trec_tokens, "BLOCK_BYTES", block)
    monkeypatch.setattr(trec_files, "MAX_BUCKETS", max_buckets)
    options = {"bucket_queries": bucket_queries, "piece_rows": piece_rows, "max_docs": max_docs}
    assert _outputs(qrels, run, **options) == whole


def test_a_scattered_run_from_a_pipe_prints_what_the_file_prints(tmp_path: Path) -> None:
    """A pipe cannot be read twice: it is read once, whole, whatever its line order."""
    qrels, _, shuffled = _write_runs(tmp_path, 40, 5, seed=3)
    from_file = _console_trec(qrels, str(shuffled))
    assert _console_trec(qrels, "/dev/stdin", stdin=shuffled.read_text()) == from_file
