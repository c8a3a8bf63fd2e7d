"""`retrieval-eval review --holes report.json` at a terminal: the unlabelled documents
that newly entered a regressed query's top k, each with its passage and the judge's view;
accepting one adds it to the fixture's expected ids and changes no other byte of the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.compare.conftest import Project
from tests.compare.test_label_judging import KEY, _answer
from tests.compare.test_labels import BASELINE_RUN, CONFIG, PR_RUN, write_run
from tests.support.action import run_cli
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.terminal import on_terminal


def _crlf_with_bom(path: Path) -> bytes:
    """The dataset as a Windows editor saves it: a byte-order mark and CRLF endings."""
    data = b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(data)
    return data


@pytest.mark.slow
def test_accepting_a_hole_labels_it_and_rejecting_one_keeps_it_out(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (tmp_path / "retrieval-eval.toml").write_text(CONFIG, encoding="utf-8")
    dataset = project.datasets / "keyword.jsonl"
    before = _crlf_with_bom(dataset)
    write_run(tmp_path, BASELINE_RUN)
    assert run_cli(tmp_path, "run").returncode == 0
    write_run(tmp_path, PR_RUN)
    with FakeAnthropic(api_key=KEY, responder=_answer) as fake:
        config = CONFIG + f'\n[judge]\nbase_url = "{fake.base_url}"\ncalibration_sample = 0\n'
        (tmp_path / "retrieval-eval.toml").write_text(config, encoding="utf-8")
        judged = run_cli(tmp_path, "run", "--judge", env={"ANTHROPIC_API_KEY": KEY})
    assert judged.returncode == 1, judged.log
    assert dataset.read_bytes() == before  # a run never labels anything by itself

    report = "retrieval-eval-report/report.json"
    shown = on_terminal("review", "--holes", report, cwd=tmp_path, stdin="a\nr\n")

    assert shown.returncode == 0, shown.stderr
    assert "[1/2] keyword.jsonl · kw-01" in shown.stdout
    assert "Query:     lemon tart pastry" in shown.stdout
    assert "Unlabelled at rank 1: travel/kyoto  (judge: relevant, 0.92)" in shown.stdout
    assert "Temples, maple leaves and the bamboo grove in Arashiyama." in shown.stdout
    assert "travel/lisbon  (judge: not relevant, 0.10)" in shown.stdout
    assert "1 accepted, 1 rejected, 0 skipped; all reviewed" in shown.stdout

    after = dataset.read_bytes()
    old_lines, new_lines = before.split(b"\r\n"), after.split(b"\r\n")
    assert len(old_lines) == len(new_lines)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert changed == [0]  # kw-01, the first line (after the byte-order mark)
    assert new_lines[0].startswith(b"\xef\xbb\xbf")
    kw01 = json.loads(new_lines[0].decode("utf-8-sig"))
    assert kw01["expected_top_k_ids"] == ["recipes/lemon-tart", "travel/kyoto"]
    assert kw01["ground_truth_source"] == "human-annotated"
    valid = run_cli(
        tmp_path,
        "validate",
        "datasets",
        "--corpus",
        "datasets/corpus",
        "--min-fixtures",
        "5",
        "--min-human",
        "3",
    )
    assert valid.returncode == 0, valid.log

    # Both are decided: the accepted one is expected now, the rejected one remembered.
    again = on_terminal("review", "--holes", report, cwd=tmp_path, stdin="")
    assert again.returncode == 0, again.stderr
    assert "every hole is decided" in again.stdout


def test_a_report_that_is_not_one_names_the_file(tmp_path: Path) -> None:
    Project(tmp_path)
    (tmp_path / "report.json").write_text('{"verdict": "passed"}\n', encoding="utf-8")
    done = run_cli(tmp_path, "review", "--holes", "report.json")
    assert done.returncode == 2
    assert "report.json: not a report.json this version of retrieval-eval reads" in done.stderr
