"""trec_eval's measure names, parameters and defaults (tools/trec/measures.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.tools.trec.measures import parse_trec_measures


def test_trec_measures_follow_trec_eval_order_and_defaults() -> None:
    measures = parse_trec_measures(["ndcg_cut.10,5", "recip_rank", "num_q", "P", "success"])
    assert [m.name for m in measures] == [
        "num_q",
        "recip_rank",
        "P_5",
        "P_10",
        "P_15",
        "P_20",
        "P_30",
        "P_100",
        "P_200",
        "P_500",
        "P_1000",
        "ndcg_cut_5",
        "ndcg_cut_10",
        "success_1",
        "success_5",
        "success_10",
    ]
    assert [m.name for m in parse_trec_measures(["official"])][:12] == [
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
        "iprec_at_recall_0.00",
        "iprec_at_recall_0.10",
    ]
    # trec_eval reads cut-offs with strtol and keeps the first parameters given.
    assert [m.name for m in parse_trec_measures(["ndcg_cut.23.4", "ndcg_cut.5"])] == ["ndcg_cut_23"]


def test_trec_measure_errors() -> None:
    with pytest.raises(ConfigError, match="unsupported trec_eval measure 'dcg'"):
        parse_trec_measures(["dcg"])
    with pytest.raises(ConfigError, match=re.escape("measure 'P.5,5': duplicate cut-offs")):
        parse_trec_measures(["P.5,5"])
    with pytest.raises(ConfigError, match="cut-offs must be positive integers"):
        parse_trec_measures(["P.0"])


CLI = Path(sys.executable).with_name("retrieval-eval")
LONG_MAX = 2**63 - 1


def run_cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), "trec", *map(str, args)], capture_output=True, text=True, check=False, cwd=cwd
    )


def test_a_huge_cut_off_clamps_to_long_max_as_strtol_does(tmp_path: Path) -> None:
    """trec_eval reads cut-offs with strtol, which clamps to LONG_MAX; before, the name
    printed the cut-off rounded through a double (P_100000000000000000000)."""
    (tmp_path / "qrels").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n")
    done = run_cli(
        "-m",
        "P.99999999999999999999",
        "-m",
        "recall.9223372036854775807",
        "qrels",
        "run",
        cwd=tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "P_9223372036854775807 \tall\t0.0000\nrecall_9223372036854775807\tall\t1.0000\n"
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 2**80), st.sampled_from(["", ".5", "abc", "e3"]))
def test_any_positive_cut_off_names_its_strtol_value(value: int, tail: str) -> None:
    (measure,) = parse_trec_measures([f"P.{value}{tail}"])
    assert measure.name == f"P_{min(value, LONG_MAX)}"


QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq1 0 d 1\nq1 0 e -1\nq2 0 x 1\nq3 0 w 1\n"
# q1 ranks a z c b e f: grades 1, -, 2, 0, . (pooled, unjudged), -; q2 ranks y x: -, 1.
RUN = (
    "q1 Q0 a 1 5 t\nq1 Q0 z 2 4 t\nq1 Q0 c 3 3 t\nq1 Q0 b 4 2 t\nq1 Q0 e 5 1.5 t\n"
    "q1 Q0 f 6 1 t\nq2 Q0 y 1 1 t\nq2 Q0 x 2 0.5 t\n"
)


def test_relstring_utility_and_11pt_avg_take_trec_evals_parameters(tmp_path: Path) -> None:
    """They were refused ("relstring takes no parameters"); trec_eval's own test suite runs
    -m relstring.20, -m utility.2,-1,0,0 and -m 11pt_avg..25,.5,.75 and prints the
    parameters as typed. Expected values worked out by hand:

    - utility p = (2, -1, -0.5, 0.25): q1 has R = 3, 6 retrieved, 2 relevant retrieved:
      2*2 - 1*4 - 0.5*1 + 0.25*(0 + 2 - 6 - 3) = -2.25; q2: 2*1 - 1*1 - 0 + 0.25*(1 - 2 - 1)
      = 0.5; q3 is missing from the run and trec_eval's -c resets it to 0.
    - 11pt_avg at .25, .5, .75: q1 finds its relevant documents at ranks 1 and 3 (precision
      1 and 2/3); lround(x * 3) = 1, 2, 2 relevant documents, so (2/3 + 2/3 + 1) / 3. q2's
      only relevant document is at rank 2 (precision 0.5): every level is 0.5.
    """
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    done = run_cli(
        "-c", "-q",
        "-m", "relstring.20", "-m", "utility.2,-1,-0.5,0.25", "-m", "11pt_avg..25,.5,.75",
        "-m", "relstring.3", "qrels", "run",
        cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "relstring_20          \tq1\t'1-20.-'\n"
        "utility_2,-1,-0.5,0.25\tq1\t-2.2500\n"
        "11pt_avg_.25,.5,.75   \tq1\t0.7778\n"
        "relstring_20          \tq2\t'-1'\n"
        "utility_2,-1,-0.5,0.25\tq2\t0.5000\n"
        "11pt_avg_.25,.5,.75   \tq2\t0.5000\n"
        "relstring_20          \tq3\t''\n"
        "utility_2,-1,-0.5,0.25\tq3\t0.0000\n"
        "11pt_avg_.25,.5,.75   \tq3\t0.0000\n"
        "utility_2,-1,-0.5,0.25\tall\t-0.5833\n"
        "11pt_avg_.25,.5,.75   \tall\t0.4259\n"
    )
    short = run_cli("-q", "-m", "relstring.2.9", "qrels", "run", cwd=tmp_path)
    assert short.stdout == "relstring_2.9         \tq1\t'1-'\nrelstring_2.9         \tq2\t'-1'\n"


def test_the_default_parameters_print_the_plain_names(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    plain = run_cli(
        "-q", "-m", "relstring", "-m", "utility", "-m", "11pt_avg", "qrels", "run", cwd=tmp_path
    )
    spelled = run_cli(
        "-q", "-m", "relstring.10", "-m", "utility.1,-1,0,0",
        "-m", "11pt_avg.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1", "qrels", "run",
        cwd=tmp_path,
    )  # fmt: skip
    assert plain.returncode == 0 and spelled.returncode == 0
    assert plain.stdout.splitlines()[0] == "relstring             \tq1\t'1-20.-'"
    strip = lambda text: [line.split("\t", 1)[1] for line in text.splitlines()]  # noqa: E731
    assert strip(plain.stdout) == strip(spelled.stdout)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("utility.1,2", "utility takes 4 coefficients"),
        ("11pt_avg.0.5,0.2", "give the recall levels in ascending order"),
        ("relstring.x", "is not a number"),
        ("relstring.1e999", "parameters must be finite numbers"),
    ],
)
def test_bad_parameters_are_refused_saying_why(tmp_path: Path, argument: str, message: str) -> None:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    done = run_cli("-m", argument, "qrels", "run", cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 3)), min_size=1, max_size=5)
)
def test_params_are_kept_in_order_and_printed_as_typed(values: list[float]) -> None:
    text = ",".join(repr(value) for value in values)
    (measure,) = parse_trec_measures([f"relstring.{text}"])
    assert measure.name == f"relstring_{text}"
    assert measure.params == tuple(values)


def test_a_wide_recall_level_is_cut_in_its_name_as_trec_eval_prints_it(tmp_path: Path) -> None:
    """trec_eval prints a double cut-off with %3.2f into 8 characters: 123456 is "123456.0"."""
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    done = run_cli("-m", "Rprec_mult.123456,0.5", "qrels", "run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    names = [line.split("\t")[0].rstrip() for line in done.stdout.splitlines()]
    assert names == ["Rprec_mult_0.50", "Rprec_mult_123456.0"]


def test_rbp_takes_trec_evals_persistence_parameter(tmp_path: Path) -> None:
    """-m rbp.p=0.5 was refused. By hand: q1's gains (grades over its highest, 2) are 0.5 at
    rank 1 and 1 at rank 3: 0.5 * (0.5 + 1 * 0.25) = 0.375; q2's grade 1 at rank 2:
    0.5 * (1 * 0.5) = 0.25."""
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    done = run_cli("-q", "-m", "rbp.p=0.5", "qrels", "run", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "rbp_p=0.5             \tq1\t0.3750\n"
        "rbp_p=0.5             \tq2\t0.2500\n"
        "rbp_p=0.5             \tall\t0.3125\n"
    )
    for bad, message in (("rbp.2=3", "not gains per grade"), ("rbp.p", "name=value pairs")):
        refused = run_cli("-m", bad, "qrels", "run", cwd=tmp_path)
        assert refused.returncode == 2 and message in refused.stderr, refused.stderr
