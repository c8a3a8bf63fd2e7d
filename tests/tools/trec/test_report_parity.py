"""``retrieval-eval trec`` against trec_eval's C code (pytrec_eval) on every measure it prints.

pytrec_eval builds trec_eval's measures from its own copy of trec_eval's sources (9.0.8),
so it is the oracle for every per-query value, except where trec_eval 10.0 changed them
or added them (docs/metrics.md lists each difference): ``iprec_at_recall`` and
``11pt_avg`` are checked against the 10.0 definition written out here, and so are
the measures pytrec_eval lacks (``rbp``, ``rbp_resid``, ``unj``) and ``relstring``,
whose text pytrec_eval cannot return. With ``-c``, a query missing from the run is
scored as trec_eval 10.0 scores it: on a stand-in ranking of one document absent from
the qrels, with num_ret, utility, relstring, unj and rbp_resid then reset. The summary
lines follow trec_eval's averaging rules, rebuilt here from the per-query oracle
values, and the printed text is compared byte for byte.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.tools.trec.measures import parse_trec_measures
from retrieval_eval.tools.trec.report import TrecResult, format_trec, score_trec_run
from retrieval_eval.tools.trec.text import tokens as trec_tokens
from tests.tools.trec.random_cases import Case, random_case, write_case

CLI = Path(sys.executable).with_name("retrieval-eval")
PYTREC_FAMILIES = {
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "recall",
    "infAP",
    "Rprec_mult",
    "ndcg_cut",
    "map_cut",
    "success",
    "set_P",
    "set_recall",
    "set_F",
    "gm_bpref",
    "utility",
    "binG",
    "relative_P",
    "set_relative_P",
    "set_map",
    "num_nonrel_judged_ret",
}
GAIN_FAMILIES = {"G", "ndcg_rel", "Rndcg"}
TOLERANCE = 1e-9
RECALL_LEVELS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
STAND_IN = {"ceci_nest_pas_un_docno": 1.0}  # trec_eval 10.0's ranking for a missing query
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
SUMMARY_ONLY = {"runid", "num_q", "gm_map", "gm_bpref"}


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), "trec", *map(str, args)], capture_output=True, text=True, check=False, cwd=cwd
    )


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by id descending (byte order)."""
    return sorted(docs, key=lambda d: (-docs[d], *(-b for b in d.encode()), 1))


def iprec_10(qrels: dict[str, int], ranking: list[str], fraction: float, level: int) -> float:
    """trec_eval 10.0's iprec_at_recall: the cut-off is lround(fraction * R) relevant documents."""
    relevant = {d for d, g in qrels.items() if g >= level}
    found = [
        (n + 1) / (rank + 1)
        for n, rank in enumerate(r for r, d in enumerate(ranking) if d in relevant)
    ]
    product = fraction * len(relevant)
    cut = math.floor(product) + (product - math.floor(product) >= 0.5)
    if cut > len(found):
        return 0.0
    return max(found[max(cut, 1) - 1 :], default=0.0)


def relstring(qrels: dict[str, int], ranking: list[str]) -> str:
    """trec_eval's relstring: the grade of each of the first ten documents."""
    out = ""
    for doc in ranking[:10]:
        grade = qrels.get(doc)
        if grade is None:
            out += "-"
        elif grade < 0:
            out += "."
        else:
            out += ">" if grade > 9 else str(grade)
    return out


def rbp(qrels: dict[str, int], ranking: list[str], *, resid: bool) -> float:
    """trec_eval 10.0's rbp and rbp_resid (p = 0.9), step by step as it adds them."""
    p = 0.9
    grades = [g for g in qrels.values() if g >= 0]
    top = max(grades, default=0)
    gains = {d: (g / top if top > 1 else g) for d, g in qrels.items() if g >= 0}
    total, weight, unjudged = 0.0, 1.0, 0
    for doc in ranking:
        if resid and doc not in gains:
            unjudged += 1
            total += weight
        elif not resid and gains.get(doc, 0) != 0:
            total += gains[doc] * weight
        weight *= p
    if resid:
        return weight + (1 - p) * total if unjudged else 0.0
    return (1.0 - p) * total


def unjudged_share(qrels: dict[str, int], ranking: list[str], cut: int) -> float:
    return sum(1 for d in ranking[:cut] if qrels.get(d, -1) < 0) / cut


def oracle(
    case_qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    level: int = 1,
    extra: frozenset[str] = frozenset(),
    *,
    complete: bool = False,
) -> dict[str, dict[str, float | str]]:
    """Per-query values by trec_eval's C code, the 10.0 changes by their definitions."""
    if complete:
        run = {**{q: STAND_IN for q in case_qrels}, **run}
    values = _pytrec_values(case_qrels, run, level, extra)
    out: dict[str, dict[str, float | str]] = {}
    for qid, measures in values.items():
        ranking = trec_order(run[qid])
        judged = case_qrels[qid]
        iprec = [iprec_10(judged, ranking, x, level) for x in RECALL_LEVELS]
        for fraction, value in zip(RECALL_LEVELS, iprec, strict=True):
            measures[f"iprec_at_recall_{fraction:3.2f}"] = value
        total = 0.0
        for value in reversed(iprec):
            total += value
        row: dict[str, float | str] = dict(measures)
        row["11pt_avg"] = total / len(RECALL_LEVELS)
        row["relstring"] = relstring(judged, ranking)
        row["rbp"] = rbp(judged, ranking, resid=False)
        row["rbp_resid"] = rbp(judged, ranking, resid=True)
        for cut in (5, 10, 20):
            row[f"unj_{cut}"] = unjudged_share(judged, ranking, cut)
        if run[qid] is STAND_IN:  # what trec_eval 10.0 resets after scoring the stand-in
            row.update(num_ret=0.0, utility=0.0, relstring="", rbp_resid=0.0)
            row.update({f"unj_{cut}": 0.0 for cut in (5, 10, 20)})
        out[qid] = row
    return out


def _pytrec_values(
    case_qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    level: int,
    extra: frozenset[str],
) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(case_qrels, PYTREC_FAMILIES, relevance_level=level)
    values = evaluator.evaluate(run)
    # Like uncut ndcg, G, ndcg_rel and Rndcg read a level count trec_eval never sets for a
    # query whose judgments are all negative: pytrec_eval then crashes or never returns.
    # This command scores them 0 (docs/metrics.md); only the other queries go to pytrec_eval.
    graded = {q: d for q, d in case_qrels.items() if any(g >= 0 for g in d.values())}
    for measures in values.values():
        measures.update(dict.fromkeys(GAIN_FAMILIES, 0.0))
    if graded:
        gains = pytrec_eval.RelevanceEvaluator(graded, GAIN_FAMILIES, relevance_level=level)
        for qid, measures in gains.evaluate(run).items():
            values[qid].update(measures)
    # pytrec_eval's uncut ndcg loops forever on a query whose judgments are all negative
    # (trec_eval reads a level count it never set); a cut past every ranking is the same.
    deep = pytrec_eval.RelevanceEvaluator(case_qrels, {"ndcg_cut.100000"}, relevance_level=level)
    for qid, measures in deep.evaluate(run).items():
        values[qid]["ndcg"] = measures["ndcg_cut_100000"]
    if extra:
        more = pytrec_eval.RelevanceEvaluator(case_qrels, set(extra), relevance_level=level)
        for qid, measures in more.evaluate(run).items():
            values[qid].update(measures)
    return values


def expected_text(
    values: dict[str, dict[str, float | str]], names: list[str], runid: str, *, per_query: bool
) -> str:
    """trec_eval's output for ``names`` (printed names in order) from per-query values."""

    def line(name: str, qid: str, value: float | str) -> str:
        if isinstance(value, str):
            return f"{name:<22}\t{qid}\t'{value}'\n"
        if name in COUNTS:
            return f"{name:<22}\t{qid}\t{int(value)}\n"
        return f"{name:<22}\t{qid}\t{value:6.4f}\n"

    queries = sorted(values)
    out = []
    if per_query:
        for qid in queries:
            out += [line(n, qid, values[qid][n]) for n in names if n not in SUMMARY_ONLY]
    for name in names:
        if name == "runid":
            out.append(f"{'runid':<22}\tall\t{runid}\n")
        elif name == "num_q":
            out.append(line(name, "all", len(queries)))
        elif name != "relstring":  # printed per query only
            total = 0.0
            for qid in queries:
                value = values[qid][name]
                assert isinstance(value, float | int)
                total += value
            if name in COUNTS:
                out.append(line(name, "all", total))
            elif name in ("gm_map", "gm_bpref"):
                out.append(line(name, "all", math.exp(total / len(queries))))
            else:
                out.append(line(name, "all", total / len(queries)))
    return "".join(out)


def printed_names(arguments: tuple[str, ...]) -> list[str]:
    return [m.name for m in parse_trec_measures(arguments)]


def _check_values(result: TrecResult, want: dict[str, dict[str, float | str]], label: str) -> int:
    checked = 0
    for name, column in result.per_query.items():
        if name in ("runid", "num_q"):
            continue
        for qid, value in zip(result.query_ids, column.tolist(), strict=True):
            expected = want[qid][name]
            assert isinstance(expected, float | int), (name, expected)
            assert abs(value - expected) <= TOLERANCE, (
                f"{label}: {name} for {qid}: {value} != {expected}"
            )
            checked += 1
    for name, texts in result.text.items():
        assert list(texts) == [want[qid][name] for qid in result.query_ids], label
        checked += len(texts)
    return checked


@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_measure_matches_trec_eval_on_random_pairs(tmp_path: Path, level: int) -> None:
    checked = 0
    for seed in range(0, 600, 3 if level == 1 else 7):
        case = random_case(seed)
        qrels_path, run_path = write_case(case, tmp_path, seed)
        want = oracle(case.qrels, case.run, level)
        if not want:
            continue
        result = score_trec_run(qrels_path, run_path, ("all_trec",), level=level)
        assert list(result.query_ids) == sorted(want), f"seed {seed}: query set"
        checked += _check_values(result, want, f"seed {seed}")
    assert checked > 5_000


def _cut_run(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    return {qid: {d: docs[d] for d in trec_order(docs)[:depth]} for qid, docs in run.items()}


@pytest.mark.parametrize("depth", [1, 3, 10])
def test_max_docs_per_query_counts_only_the_top_of_each_ranking(tmp_path: Path, depth: int) -> None:
    checked = 0
    for seed in range(1, 400, 9):
        case = random_case(seed)
        qrels_path, run_path = write_case(case, tmp_path, seed)
        want = oracle(case.qrels, _cut_run(case.run, depth))
        if not want:
            continue
        result = score_trec_run(qrels_path, run_path, ("all_trec",), max_docs=depth)
        checked += _check_values(result, want, f"seed {seed}")
    assert checked > 1_000


@pytest.mark.parametrize(
    "arguments",
    [
        (),
        ("-q",),
        ("-m", "all_trec"),
        ("-m", "all_trec", "-q"),
        ("-c", "-q", "-m", "all_trec"),
        ("-c", "-m", "official"),
        ("-m", "official", "-m", "ndcg_cut.23.4", "-m", "success.1,5"),
    ],
)
def test_printed_output_is_byte_identical_to_trec_eval(
    tmp_path: Path, arguments: tuple[str, ...]
) -> None:
    measure_args = tuple(a for i, a in enumerate(arguments) if i > 0 and arguments[i - 1] == "-m")
    names = printed_names(measure_args)
    compared = 0
    for seed in (3, 8, 21, 34, 55, 89, 144):
        case = random_case(seed)
        qrels_path, run_path = write_case(case, tmp_path, seed)
        want = oracle(
            case.qrels,
            case.run,
            extra=frozenset({"ndcg_cut.23", "success.1,5"}),
            complete="-c" in arguments,
        )
        if not want:
            continue
        done = run_cli(*arguments, qrels_path, run_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected_text(want, names, "tag", per_query="-q" in arguments)
        compared += 1
    assert compared >= 5
    if measure_args[-1:] == ("success.1,5",):
        assert "ndcg_cut_23           \tall\t" in done.stdout


def test_complete_flag_scores_missing_queries_zero_and_gm_map_at_its_floor(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 2.0 first\n1 Q0 b 2 1.0 last\n")
    done = run_cli("-c", "-m", "num_q", "-m", "map", "-m", "gm_map", "-m", "bpref", qrels, run)
    assert done.returncode == 0, done.stderr
    floor = math.exp((math.log(1.0) + math.log(0.00001)) / 2)
    assert done.stdout == (
        "num_q                 \tall\t2\n"
        "map                   \tall\t0.5000\n"
        f"gm_map                \tall\t{floor:6.4f}\n"
        "bpref                 \tall\t0.5000\n"
    )


def test_runid_is_the_tag_of_the_last_line(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 first\n1 Q0 b 2 1.0 second\n")
    done = run_cli("-m", "runid", "-q", "qrels", "run", cwd=tmp_path)
    assert done.stdout == "runid                 \tall\tsecond\n"


def test_a_document_listed_twice_is_rejected_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    (tmp_path / "run").write_text("1 Q0 x 1 3.0 t\n1 Q0 a 2 2.0 t\n2 Q0 x 1 1 t\n1 Q0 x 3 1.0 t\n")
    done = run_cli("qrels", "run", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "error: run:4: document 'x' appears twice for query '1'; "
        "list each document once per query\n"
    )


def test_measure_arguments_are_read_like_trec_eval(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 2\n1 0 b 1\n")
    (tmp_path / "run").write_text("1 Q0 b 1 2.0 t\n1 Q0 a 2 1.0 t\n")
    done = run_cli(
        "-m",
        "P.2",
        "-m",
        "P.1",
        "-m",
        "iprec_at_recall.0.5",
        "-m",
        "set_F.0.5",
        "qrels",
        "run",
        cwd=tmp_path,
    )
    assert done.stdout == (
        "iprec_at_recall_0.50  \tall\t1.0000\n"
        "P_2                   \tall\t1.0000\n"
        "set_F_0.5             \tall\t1.0000\n"
    )
    for bad, message in (
        ("bogus", "unsupported trec_eval measure 'bogus'"),
        ("P.0", "cut-offs must be positive integers"),
        ("P.5,5", "duplicate cut-offs"),
        ("map.3", "map takes no parameters"),
    ):
        done = run_cli("-m", bad, "qrels", "run", cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr, (bad, done.stderr)


def test_relevance_level_flag_matches_trec_eval(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n")
    (tmp_path / "run").write_text("1 Q0 b 1 3.0 t\n1 Q0 c 2 2.0 t\n1 Q0 a 3 1.0 t\n")
    qrels = {"1": {"a": 2, "b": 1, "c": 0}}
    run = {"1": {"b": 3.0, "c": 2.0, "a": 1.0}}
    names = printed_names(("official", "ndcg", "bpref"))
    done = run_cli("-l", "2", "-m", "official", "-m", "ndcg", "qrels", "run", cwd=tmp_path)
    assert done.stdout == expected_text(oracle(qrels, run, 2), names, "t", per_query=False)


# --- input of any size and id length -------------------------------------------------

_ID_ALPHABET = "abcxyz0129-_./:"
# Mostly short ids with some long ones: a block's width comes from its longest id, so the
# mix is what puts short ids at the end of a block that long ids made wide.
ids = st.one_of(
    st.text(alphabet=_ID_ALPHABET, min_size=1, max_size=12),
    st.text(alphabet=_ID_ALPHABET, min_size=100, max_size=300),
)


@st.composite
def qrels_and_runs(draw: st.DrawFn) -> tuple[Case, str]:
    queries = draw(
        st.lists(
            st.text(alphabet="0123456789Qq", min_size=1, max_size=12),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    pool = draw(st.lists(ids, min_size=1, max_size=25, unique=True))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    score_text: dict[tuple[str, str], str] = {}
    for qid in queries:
        judged = draw(st.lists(st.sampled_from(pool), max_size=8, unique=True))
        if judged:
            qrels[qid] = {d: draw(st.integers(-1, 3)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=25, unique=True))
        run[qid] = {}
        for doc in retrieved:
            score = draw(st.integers(-8, 8)) / 4  # exact in float32 too: no rounding differences
            run[qid][doc] = score
            score_text[(qid, doc)] = f"{score}"
    order = draw(st.sampled_from(["trec", "shuffled", "interleaved"]))
    return Case(qrels, run, score_text, order), draw(st.sampled_from(["official", "all_trec"]))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    drawn=qrels_and_runs(),
    block=st.integers(min_value=48, max_value=2048),
    seed=st.integers(0, 2**16),
)
def test_any_id_length_file_size_and_query_order_parses_like_trec_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drawn: tuple[Case, str], block: int, seed: int
) -> None:
    """Small read blocks put block boundaries everywhere a 1 MiB block would fall in a big file."""
    case, nickname = drawn
    monkeypatch.setattr(trec_tokens, "BLOCK_BYTES", block)
    qrels_path, run_path = write_case(case, tmp_path, seed)
    want = oracle(case.qrels, case.run)
    if not want:
        return
    result = score_trec_run(qrels_path, run_path, (nickname,))
    assert list(result.query_ids) == sorted(want)
    _check_values(result, want, "drawn")
    names = printed_names((nickname,))
    assert format_trec(result, per_query=True) == expected_text(want, names, "tag", per_query=True)


def test_megabyte_files_with_mixed_id_lengths(tmp_path: Path) -> None:
    """Real 1 MiB blocks: mostly 8-character ids, a few of 39 and one of 3 MB (MS MARCO, URLs)."""
    rng = np.random.default_rng(5)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(1500):
        qid = str(q)
        docs = [
            f"d{int(x):07d}" if rng.random() > 0.02 else f"http://example.org/{int(x):020d}"
            for x in rng.choice(10**7, size=60, replace=False)
        ]
        run[qid] = {d: float(int(rng.integers(0, 40))) / 2 for d in docs}
        qrels[qid] = {d: int(rng.integers(0, 3)) for d in docs[::6]}
    run["0"]["y" * 3_000_000] = -1.0
    case = Case(
        qrels,
        run,
        {(q, d): f"{s}" for q, docs in run.items() for d, s in docs.items()},
        "interleaved",
    )
    qrels_path, run_path = write_case(case, tmp_path, 5)
    assert run_path.stat().st_size > 5 * 2**20 and qrels_path.stat().st_size > 2**18
    done = run_cli("-q", "-m", "all_trec", qrels_path, run_path)
    assert done.returncode == 0, done.stderr
    want = oracle(qrels, run)
    assert done.stdout == expected_text(want, printed_names(("all_trec",)), "tag", per_query=True)


# trec_eval 10.0's measure table, in its printing order, restricted to its all_trec nickname.
ALL_TREC_10 = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj",
]


def test_all_trec_prints_trec_eval_10_families_in_its_table_order(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 t\n1 Q0 c 2 1.0 t\n")
    done = run_cli("-q", "-m", "all_trec", "qrels", "run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    summary = [name.rstrip() for name, qid, _ in lines if qid == "all"]
    per_query = [name.rstrip() for name, qid, _ in lines if qid == "1"]

    def family(name: str) -> str:
        return next(f for f in sorted(ALL_TREC_10, key=len, reverse=True) if name.startswith(f))

    assert list(dict.fromkeys(map(family, summary))) == [f for f in ALL_TREC_10 if f != "relstring"]
    assert list(dict.fromkeys(map(family, per_query))) == [
        f for f in ALL_TREC_10 if f not in ("runid", "num_q", "gm_map", "gm_bpref")
    ]
    assert ["relstring             ", "1", "'1-'"] in lines
    assert ["unj_20                ", "all", "0.0500"] in lines


def test_rndcg_zero_over_zero_prints_as_c_prints_it(tmp_path: Path) -> None:
    """-l 0 with only grade-0 judgments: trec_eval divides 0 by 0 and glibc prints -nan."""
    (tmp_path / "qrels").write_text("1 0 a 0\n1 0 b 0\n2 0 c 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2 t\n1 Q0 z 2 1 t\n2 Q0 c 1 1 t\n")
    done = run_cli("-l", "0", "-q", "-m", "Rndcg", "qrels", "run", cwd=tmp_path)
    assert done.stdout == (
        "Rndcg                 \t1\t  -nan\n"
        "Rndcg                 \t2\t1.0000\n"
        "Rndcg                 \tall\t  -nan\n"
    )
    document = run_cli("--json", "-l", "0", "-m", "Rndcg", "qrels", "run", cwd=tmp_path).stdout
    assert '"Rndcg": null' in document
