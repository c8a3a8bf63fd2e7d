"""A baseline that cannot be compared against stops the run; it never switches the gate off.

Threat: a hand-edited or damaged ``baseline.json`` (NaN, Infinity, an emptied
``metrics`` object, a dropped value) used to make every comparison vacuous, so a
33% drop passed as "within 5%". Each case runs ``retrieval-eval run`` as a user
does and checks exit 2, a message naming the place, and the file left byte for
byte as it was.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.compare.baseline import load_baseline
from retrieval_eval.errors import InputError
from tests.compare.conftest import Project

CONSOLE_SCRIPT = str(Path(sys.executable).with_name("retrieval-eval"))
DATASET = "keyword.jsonl"


def cli(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CONSOLE_SCRIPT, *args],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project.root)},
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real baseline, written once by a first run."""
    project = Project(tmp_path_factory.mktemp("first"))
    first = cli(project, "run", "--quiet")
    assert first.returncode == 0, first.stderr
    return project.baseline_data()


def _entry(data: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = data["datasets"][DATASET]
    return entry


def _first_scored(data: dict[str, Any]) -> dict[str, Any]:
    return next(q for q in _entry(data)["queries"].values() if q["metrics"])


def _set_aggregate(value: float) -> Callable[[dict[str, Any]], None]:
    return lambda data: _entry(data)["aggregates"].__setitem__("ndcg@10", value)


def _set_query_metric(value: float) -> Callable[[dict[str, Any]], None]:
    return lambda data: _first_scored(data)["metrics"].__setitem__("mrr@10", value)


def _empty_every_metrics(data: dict[str, Any]) -> None:
    for query in _entry(data)["queries"].values():
        query["metrics"] = {}


def _drop_aggregate(data: dict[str, Any]) -> None:
    del _entry(data)["aggregates"]["mrr@10"]


def _drop_measure_everywhere(data: dict[str, Any]) -> None:
    entry = _entry(data)
    entry["measures"] = [m for m in entry["measures"] if m != "ndcg@10"]
    del entry["aggregates"]["ndcg@10"]
    for query in entry["queries"].values():
        query["metrics"].pop("ndcg@10", None)


def _no_aggregates_key(data: dict[str, Any]) -> None:
    del _entry(data)["aggregates"]


def _only_a_nan_aggregate(data: dict[str, Any]) -> None:
    data["datasets"][DATASET] = {"aggregates": {"mrr@10": float("nan")}}


def _nan_beside_a_null(data: dict[str, Any]) -> None:
    _entry(data)["aggregates"]["mrr@10"] = None
    _entry(data)["aggregates"]["ndcg@10"] = float("nan")


def _values_without_queries(data: dict[str, Any]) -> None:
    del _entry(data)["queries"]


CORRUPTIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "NaN aggregate": (_set_aggregate(float("nan")), "aggregates.ndcg@10"),
    "Infinity aggregate": (_set_aggregate(float("inf")), "aggregates.ndcg@10"),
    "-Infinity query value": (_set_query_metric(float("-inf")), "metrics.mrr@10"),
    "NaN query value": (_set_query_metric(float("nan")), "metrics.mrr@10"),
    "every metrics object emptied": (_empty_every_metrics, "every `metrics` object lacks it"),
    "a recorded measure without its aggregate": (_drop_aggregate, "aggregates"),
    "no aggregates key": (_no_aggregates_key, "aggregates"),
    "only a NaN aggregate, no queries": (_only_a_nan_aggregate, "aggregates.mrr@10 is nan"),
    "NaN beside a null": (_nan_beside_a_null, "aggregates.ndcg@10 is nan"),
    "values but no queries key": (_values_without_queries, "it has no `queries`"),
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_a_corrupt_baseline_exits_2_and_is_left_untouched(
    tmp_path: Path, recorded: dict[str, Any], case: str
) -> None:
    damage, where = CORRUPTIONS[case]
    project = Project(tmp_path)
    data = copy.deepcopy(recorded)
    damage(data)
    project.baseline.write_text(json.dumps(data, indent=2), encoding="utf-8")  # NaN as JSON does
    before = project.baseline.read_bytes()
    mtime = project.baseline.stat().st_mtime_ns

    result = cli(project, "run", "--quiet")

    assert result.returncode == 2, result.stdout + result.stderr
    assert "error: baseline.json: the baseline is corrupt" in result.stderr  # as in the repo
    assert where in result.stderr
    assert "baseline update" in result.stderr  # how to recover
    assert project.baseline.read_bytes() == before
    assert project.baseline.stat().st_mtime_ns == mtime
    assert not project.report_dir.exists()


def test_a_gated_measure_the_entry_never_recorded_is_new_not_a_silent_pass(
    tmp_path: Path, recorded: dict[str, Any]
) -> None:
    """Without the measure anywhere in the entry the gate has nothing to compare it with: it
    is reported as new (never as passed), and this run records it beside the kept values."""
    project = Project(tmp_path)
    data = copy.deepcopy(recorded)
    _drop_measure_everywhere(data)
    project.baseline.write_text(json.dumps(data, indent=2), encoding="utf-8")

    result = cli(project, "run", "--quiet")

    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((project.report_dir / "report.json").read_text(encoding="utf-8"))
    [row] = [r for r in report["datasets"][0]["rows"] if r["metric"] == "ndcg@10"]
    assert row["status"] == "new"
    entry = _entry(project.baseline_data())
    assert "ndcg@10" in entry["measures"] and "ndcg@10" in entry["aggregates"]
    assert entry["aggregates"]["mrr@10"] == _entry(data)["aggregates"]["mrr@10"]


def test_a_real_drop_against_a_sound_baseline_still_fails(
    tmp_path: Path, recorded: dict[str, Any]
) -> None:
    """The control: the same baseline, undamaged but raised, is a regression (exit 1)."""
    project = Project(tmp_path)
    data = copy.deepcopy(recorded)
    for query in _entry(data)["queries"].values():
        if query["metrics"]:
            query["metrics"]["ndcg@10"] = 1.0
    project.baseline.write_text(json.dumps(data, indent=2), encoding="utf-8")
    result = cli(project, "run", "--quiet")
    assert result.returncode == 1, result.stderr
    assert "Regression: keyword.jsonl NDCG@10" in result.stderr


def test_explicit_nulls_still_mean_establish_a_baseline(tmp_path: Path) -> None:
    """The documented null rule is kept: `null` is "not recorded yet", not damage."""
    project = Project(tmp_path)
    project.baseline.write_text(
        json.dumps({"datasets": {DATASET: {"aggregates": None, "queries": None}}}),
        encoding="utf-8",
    )
    result = cli(project, "run", "--quiet")
    assert result.returncode == 0, result.stderr
    assert _entry(project.baseline_data())["aggregates"]["mrr@10"] is not None


_NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.none(), st.integers(-5, 5))


@given(
    aggregates=st.dictionaries(st.sampled_from(["mrr@10", "ndcg@10", "latency_p95_ms"]), _NUMBER),
    metrics=st.lists(st.dictionaries(st.sampled_from(["mrr@10", "ndcg@10"]), _NUMBER), max_size=3),
    measures=st.lists(st.sampled_from(["mrr@10", "ndcg@10"]), unique=True),
)
def test_an_established_entry_only_ever_holds_finite_values(
    aggregates: dict[str, Any], metrics: list[dict[str, Any]], measures: list[str]
) -> None:
    """Whatever numbers a baseline holds, a loaded entry that the gate compares against has a
    finite value for every measure it records, and some query holds each one; else it is an
    error (never a silent pass). A gated measure it never recorded is new: shown as new,
    not compared."""
    entry = {
        "measures": measures,
        "aggregates": aggregates,
        "queries": {f"q{i}": {"metrics": m} for i, m in enumerate(metrics)},
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "baseline.json"
        path.write_text(json.dumps({"datasets": {DATASET: entry}}), encoding="utf-8")
        try:
            baseline = load_baseline(path, gated=["mrr@10"])
        except InputError as error:
            assert "the baseline is corrupt" in str(error)
            return
    assert baseline is not None
    established = baseline.established(DATASET)
    if established is None:
        return  # the null rule: nothing is compared, the run establishes it
    assert established.aggregates is not None and established.queries is not None
    for name in established.recorded_measures():
        value = established.aggregates[name]
        assert value is not None and math.isfinite(value)
        assert any(name in (q.metrics or {}) for q in established.queries.values())
    for query in established.queries.values():
        assert all(v is None or math.isfinite(v) for v in (query.metrics or {}).values())
