"""``-m`` arguments of ``retrieval-eval trec``, read as trec_eval 10.0 reads them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.trec.measures import parse_trec_measures

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
