"""The sentence under a dataset's latency table says how latency and cost were gated."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval_eval.render.gate_note import latency_cost_note
from retrieval_eval.results import GatePolicy
from tests.compare.conftest import CONFIG, Project
from tests.render.reports import dataset, mrr_row

CLI = [str(Path(sys.executable).with_name("retrieval-eval"))]
DATASET = "keyword.jsonl"
NOT_RELATIVE = "Latency and cost are compared with the baseline only when `gated` names them"


def _run(project: Project) -> tuple[int, str]:
    result = subprocess.run(
        [*CLI, "run", "--quiet"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(project.root), "CI": "true"},
    )
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, (project.report_dir / "report.md").read_text(encoding="utf-8")


def _impossibly_fast_baseline(project: Project) -> None:
    data = json.loads(project.baseline.read_text(encoding="utf-8"))
    data["datasets"][DATASET]["aggregates"]["latency_p95_ms"] = 1e-6
    project.baseline.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_by_default_the_report_says_latency_and_cost_meet_their_thresholds_only(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    _run(project)
    _impossibly_fast_baseline(project)
    code, report = _run(project)
    assert code == 0
    assert (
        "Latency p95 (ms) is gated by its threshold (≤ 500) only. "
        "Cost / query ($) is gated by its threshold (≤ 0.002) only. " + NOT_RELATIVE
    ) in report


def test_a_gated_latency_is_said_to_be_gated_at_the_tolerance_in_force(tmp_path: Path) -> None:
    """The sentence beside a latency row marked regressed must not say it is not compared."""
    project = Project(tmp_path)
    (project.root / "retrieval-eval.toml").write_text(
        'gated = ["mrr@10", "latency_p95_ms"]\ntolerance = 0.2\n' + CONFIG, encoding="utf-8"
    )
    _run(project)
    _impossibly_fast_baseline(project)
    code, report = _run(project)
    assert code == 1
    assert "| Latency p95 (ms) |" in report and "regressed" in report
    assert (
        "Latency p95 (ms) fails when it rises more than 20% above the baseline or breaks its "
        "threshold (≤ 500). Cost / query ($) is gated by its threshold (≤ 0.002) only. "
        + NOT_RELATIVE
    ) in report
    assert "absolute ceilings only" not in report


@pytest.mark.parametrize(
    ("gated", "threshold", "expected"),
    [
        (
            True,
            "≤ 9",
            "Cost / query ($) fails when it rises more than 12.5% above the baseline "
            "or breaks its threshold (≤ 9).",
        ),
        (True, None, "Cost / query ($) fails when it rises more than 12.5% above the baseline."),
        (False, "≤ 9", "Cost / query ($) is gated by its threshold (≤ 9) only."),
        (False, None, "Cost / query ($) is not gated."),
    ],
)
def test_each_way_a_metric_can_be_gated(gated: bool, threshold: str | None, expected: str) -> None:
    rows = [
        mrr_row(1.0, 1.0, "ok"),
        mrr_row(1.0, 1.0, "ok").model_copy(
            update={"metric": "cost_per_query_usd", "gated": gated, "threshold": threshold}
        ),
        mrr_row(1.0, 1.0, "ok").model_copy(
            update={"metric": "latency_p95_ms", "gated": True, "threshold": None}
        ),
    ]
    policy = GatePolicy(rule="any-metric", tolerance=0.125, headline="mrr@10", gated=("mrr@10",))
    note = latency_cost_note(dataset([], rows=rows), policy)
    assert expected in note
    assert note.startswith(
        "Latency p95 (ms) fails when it rises more than 12.5% above the baseline."
    )
    assert (NOT_RELATIVE in note) is (not gated)


def test_a_metric_with_its_own_tolerance_is_said_with_it() -> None:
    rows = [
        mrr_row(1.0, 1.0, "ok").model_copy(
            update={"metric": "latency_p95_ms", "gated": True, "threshold": None}
        ),
    ]
    policy = GatePolicy(
        rule="any-metric",
        tolerance=0.05,
        tolerances={"latency_p95_ms": 0.3},
        headline="mrr@10",
        gated=("mrr@10", "latency_p95_ms"),
    )
    note = latency_cost_note(dataset([], rows=rows), policy)
    assert note.startswith("Latency p95 (ms) fails when it rises more than 30% above the baseline.")
