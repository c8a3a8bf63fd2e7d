"""A run whose queries each sit in one stretch is scored in pieces as it is read.

The pieces must not show: the output is byte-identical to the whole-file path's
(a run with the same lines interleaved across queries is read whole, and that
path is checked against trec_eval's own values elsewhere), whatever the piece
and read-block sizes, and errors name the same line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.tools.trec.report import as_json, format_trec, score_trec_run
from retrieval_eval.tools.trec.text import tokens as trec_tokens
from retrieval_eval.tools.trec.text.files import NotContiguousError, stream_run
from tests.tools.trec.id_strategies import DOC_IDS, QUERY_IDS, SCORES

MEASURES = ("all_trec",)
Run = dict[str, list[tuple[str, str]]]


def _contiguous(run: Run) -> str:
    return "".join(f"{q} Q0 {d} 0 {s} tag{q}\n" for q, docs in run.items() for d, s in docs)


def _interleaved(run: Run) -> str:
    """The same lines, round-robin over the queries: no query in one stretch."""
    lines: list[str] = []
    depth = max(len(docs) for docs in run.values())
    for rank in range(depth):
        for q, docs in run.items():
            if rank < len(docs):
                d, s = docs[rank]
                lines.append(f"{q} Q0 {d} 0 {s} tag{q}\n")
    last = list(run)[-1]  # trec_eval prints the last line's tag: keep the same last line
    final = f"{last} Q0 {run[last][-1][0]} 0 {run[last][-1][1]} tag{last}\n"
    lines.remove(final)
    return "".join(lines) + final


def _outputs(qrels: Path, run: Path, **options: object) -> tuple[str, str]:
    result = score_trec_run(qrels, run, MEASURES, **options)  # type: ignore[arg-type]
    return format_trec(result, per_query=True), json.dumps(as_json(result, per_query=True))


@pytest.fixture(scope="module")
def cranfield(
    cranfield_beir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Path]:
    """(qrels, run with each query's lines together, the same lines interleaved).

    Cranfield's real judgments; the run retrieves some judged documents among decoys,
    with scores in steps of 0.5 so many tie.
    """
    rng = np.random.default_rng(11)
    folder = tmp_path_factory.mktemp("stream")
    rows = [
        line.split("\t")
        for line in (cranfield_beir / "qrels" / "test.tsv").read_text().splitlines()[1:]
    ]
    qrels = folder / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    judged: dict[str, list[str]] = {}
    for q, d, _ in rows:
        judged.setdefault(q, []).append(d)
    run: Run = {}
    for q, docs in judged.items():
        decoys = {str(x) for x in rng.choice(np.arange(1, 1401), size=25, replace=False)}
        picked = [d for d in docs if rng.random() < 0.6] + sorted(decoys - set(docs))
        run[q] = [(d, f"{rng.integers(0, 12) / 2:.1f}") for d in picked]
    run["no-such-query"] = [("1", "1.0")]
    (folder / "sorted").write_text(_contiguous(run))
    (folder / "scattered").write_text(_interleaved(run))
    return qrels, folder / "sorted", folder / "scattered"


@pytest.mark.parametrize("piece_rows", [1, 7, 100, 1 << 30])
def test_a_sorted_run_read_in_small_pieces_prints_what_the_whole_file_path_prints(
    cranfield: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, piece_rows: int
) -> None:
    qrels, ordered, shuffled = cranfield
    with pytest.raises(NotContiguousError):
        next(stream_run(shuffled))
    for options in ({}, {"max_docs": 5}, {"level": 2}):
        whole = _outputs(qrels, shuffled, in_pieces=False, **options)
        monkeypatch.setattr(trec_tokens, "BLOCK_BYTES", 256)
        assert _outputs(qrels, ordered, piece_rows=piece_rows, **options) == whole
        if piece_rows < 100:  # a piece ends with a read block: these were really small
            assert len(list(stream_run(ordered, piece_rows))) > 50
        monkeypatch.undo()


def test_an_error_in_a_later_piece_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n2 0 b 1\n3 0 c 1\n")
    lines = ["1 Q0 a 1 3 t\n", "1 Q0 x 2 2 t\n", "2 Q0 b 1 3 t\n", "3 Q0 c 1 3 t\n"]
    (tmp_path / "run").write_text("".join(lines) + "3 Q0 c 2 1 t\n")
    with pytest.raises(InputError) as caught:
        score_trec_run(tmp_path / "qrels", tmp_path / "run", ("map",), piece_rows=1)
    assert caught.value.line == 5
    assert "appears twice for query '3'" in str(caught.value)


@pytest.mark.slow
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    run=st.dictionaries(
        QUERY_IDS,
        st.lists(st.tuples(DOC_IDS, SCORES), min_size=1, max_size=6, unique_by=lambda t: t[0]),
        min_size=1,
        max_size=6,
    ),
    judged=st.dictionaries(
        st.tuples(QUERY_IDS, DOC_IDS), st.integers(-1, 3), min_size=1, max_size=25
    ),
    piece_rows=st.integers(1, 12),
    block=st.integers(24, 200),
    max_docs=st.none() | st.integers(1, 4),
)
def test_random_sorted_runs_in_random_pieces_print_what_the_whole_file_path_prints(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run: Run,
    judged: dict[tuple[str, str], int],
    piece_rows: int,
    block: int,
    max_docs: int | None,
) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in judged.items()))
    (tmp_path / "sorted").write_text(_contiguous(run))
    (tmp_path / "scattered").write_text(_interleaved(run))

    def outputs(name: str, **options: object) -> tuple[str, str] | str:
        try:
            return _outputs(qrels, tmp_path / name, max_docs=max_docs, **options)
        except InputError as error:  # no query in common: the same message either way
            return str(error).replace(str(tmp_path / name), "RUN")

    whole = outputs("scattered", in_pieces=False)
    monkeypatch.setattr(trec_tokens, "BLOCK_BYTES", block)
    assert outputs("sorted", piece_rows=piece_rows) == whole
    monkeypatch.undo()


def test_a_repeated_document_in_a_piece_without_judgments_is_an_error(tmp_path: Path) -> None:
    """trec_eval refuses the run even where the repeat is in a query it does not score."""
    (tmp_path / "qrels").write_text("2 0 b 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 3 t\n1 Q0 a 2 2 t\n2 Q0 b 1 3 t\n")
    with pytest.raises(InputError) as caught:
        score_trec_run(tmp_path / "qrels", tmp_path / "run", ("map",), piece_rows=1)
    assert caught.value.line == 2
    assert "appears twice for query '1'" in str(caught.value)
