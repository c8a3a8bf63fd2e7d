"""The judge asked about labels, through `retrieval-eval run --judge` with the real
anthropic client against a Messages API on 127.0.0.1: the holes of regressed queries
get its view, its agreement with the human labels is measured, and both are cached."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.compare.conftest import Project
from tests.compare.test_labels import BASELINE_RUN, CONFIG, EXPECTED, PR_RUN, write_run
from tests.support.action import run_cli
from tests.support.fake_anthropic import FakeAnthropic, RecordedRequest

KEY = "sk-ant-test-labels-0451"
QUERY_IDS = {
    "lemon tart pastry": "kw-01",
    "shakshuka eggs tomato": "kw-02",
    "Lisbon budget euros": "kw-03",
    "Kyoto temples maple": "kw-04",
    "token bucket rate limiter": "kw-05",
    "SQLite WAL readers writer": "kw-06",
    "blue-green deployment router": "kw-07",
    "marathon long run calves": "kw-08",
    "habits cues rewards": "kw-09",
    "how to stay focused for hours": "kw-10",
    "lemon": "kw-11",
}
# The judge's labels: every expected document relevant except lemon-chicken for "lemon";
# travel/kyoto relevant for "lemon tart pastry" (a hole it would fill); nothing else.
NOT_RELEVANT = {("kw-11", "recipes/lemon-chicken")}
ALSO_RELEVANT = {("kw-01", "travel/kyoto")}


def is_label_call(request: RecordedRequest) -> bool:
    return "You label search results." in request.body["messages"][0]["content"]


def _answer(body: dict[str, Any]) -> tuple[int, str]:
    prompt = body["messages"][0]["content"]
    query = re.search(r"^Query: (.*)$", prompt, re.MULTILINE)
    assert query is not None
    if "You label search results." not in prompt:
        return 200, json.dumps({"score": 1.0})  # the per-query judge
    document = re.search(r"^Document \((.*)\):$", prompt, re.MULTILINE)
    assert document is not None
    pair = (QUERY_IDS[query.group(1)], document.group(1))
    relevant = (pair[1] in EXPECTED[pair[0]] and pair not in NOT_RELEVANT) or pair in ALSO_RELEVANT
    return 200, json.dumps({"score": 0.92 if relevant else 0.1})


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    write_run(tmp_path, BASELINE_RUN)
    (tmp_path / "retrieval-eval.toml").write_text(CONFIG, encoding="utf-8")
    assert run_cli(tmp_path, "run").returncode == 0  # the baseline, without the judge
    write_run(tmp_path, PR_RUN)
    return project


def _judged_run(project: Project, fake: FakeAnthropic, *flags: str) -> dict[str, Any]:
    config = CONFIG + f'\n[judge]\nbase_url = "{fake.base_url}"\ncalibration_sample = 100\n'
    (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
    done = run_cli(project.root, "run", "--judge", *flags, env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 1, done.log  # the regression stands, whatever the judge says
    assert KEY not in done.log
    report: dict[str, Any] = json.loads((project.report_dir / "report.json").read_text())
    return report


@pytest.mark.slow
def test_holes_are_judged_calibration_is_measured_and_a_rerun_asks_nothing(
    project: Project,
) -> None:
    with FakeAnthropic(api_key=KEY, responder=_answer) as fake:
        report = _judged_run(project, fake)
        first_calls = [r for r in fake.requests if is_label_call(r)]
        fake.requests.clear()
        again = _judged_run(project, fake, "--max-cost-usd", "0")
        second_calls = [r for r in fake.requests if is_label_call(r)]

    dataset = report["datasets"][0]
    moves = {m["query_id"]: m for m in dataset["comparison"]["regressed_most"]}
    kyoto = moves["kw-01"]["holes"][0]
    assert kyoto["doc_id"] == "travel/kyoto"
    assert kyoto["judge"] == {"relevant": True, "score": 0.92, "model": "claude-haiku-4-5"}
    assert moves["kw-02"]["holes"][0]["judge"]["relevant"] is False

    # Calibration on every pair (the sample asks for more than there are): the 9 expected
    # documents of the 8 human-annotated scored fixtures (kw-01..07, kw-11), and the best
    # unlabelled document of the 7 of them that returned one (kw-11 returned none).
    # The judge: 8 of 9 expected relevant (not lemon-chicken), 1 of 7 others (kyoto).
    calibration = dataset["calibration"]
    assert calibration["sample_size"] == 16
    assert (calibration["labelled_relevant"], calibration["labelled_other"]) == (9, 7)
    confusion = [
        calibration[k]
        for k in ("true_positive", "false_negative", "false_positive", "true_negative")
    ]
    assert confusion == [8, 1, 1, 6]
    # Cohen's kappa by hand: p_o = 14/16; both raters said "relevant" 9 times of 16, so
    # p_e = (9*9 + 7*7) / 16**2 = 130/256; kappa = (224/256 - 130/256) / (126/256) = 47/63.
    assert calibration["accuracy"] == pytest.approx(14 / 16)
    assert calibration["kappa"] == pytest.approx(47 / 63)
    assert calibration["stopped"] is None

    # 2 holes + 16 calibration pairs, two of which ((kw-01, travel/kyoto), (kw-02,
    # travel/lisbon)) are the holes already judged: 16 paid calls. The second run, with no
    # budget at all, is answered from the cache and has every number.
    assert len(first_calls) == 16
    assert second_calls == []
    assert again["datasets"][0]["calibration"] == {**calibration, "cost_usd": 0.0}
    assert calibration["cost_usd"] == pytest.approx(14 * (1200 * 1.0 + 8 * 5.0) / 1_000_000)
    assert again["datasets"][0]["comparison"] == dataset["comparison"]

    markdown = (project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "| travel/kyoto · possibly a missing label; judge: relevant, 0.92 |" in markdown
    assert "| kw-02 | 1 | travel/lisbon | judge: not relevant, 0.10 |" in markdown
    assert "Judge agreement with your labels: accuracy 0.88, Cohen's κ 0.75 on 16 pairs" in markdown
    assert "| expected document | 8 | 1 |" in markdown


@pytest.mark.slow
def test_the_cost_cap_stops_label_calls_and_says_how_far_they_got(project: Project) -> None:
    # Each label call may cost up to about $0.0006 (its prompt, generously counted, and 32
    # reply tokens): $0.002 buys a few of them.
    with FakeAnthropic(api_key=KEY, responder=_answer) as fake:
        report = _judged_run(project, fake, "--max-cost-usd", "0.002")
    paid = [r for r in fake.requests if is_label_call(r)]
    # The fake bills 1200 input and 8 output tokens a call: $0.00124.
    spent = len(paid) * (1200 * 1.0 + 8 * 5.0) / 1_000_000
    assert 0 < len(paid) < 16 and spent <= 0.002 + 0.0013
    calibration = report["datasets"][0]["calibration"]
    assert calibration["stopped"] is not None
    assert "stopped before passing --max-cost-usd 0.002" in calibration["stopped"]
    assert calibration["sample_size"] < 16


@pytest.mark.slow
def test_a_malformed_label_fails_the_run_and_is_not_kept(project: Project) -> None:
    def garbled(body: dict[str, Any]) -> tuple[int, str]:
        if "You label search results." in body["messages"][0]["content"]:
            return 200, "relevant, I think"
        return _answer(body)

    with FakeAnthropic(api_key=KEY, responder=garbled) as fake:
        config = CONFIG + f'\n[judge]\nbase_url = "{fake.base_url}"\n'
        (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
        done = run_cli(project.root, "run", "--judge", env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 2
    assert "the judge's reply for query 'kw-01' is not a score between 0 and 1" in done.stderr
    with FakeAnthropic(api_key=KEY, responder=_answer) as fake:
        report = _judged_run(project, fake)
    moves = report["datasets"][0]["comparison"]["regressed_most"]
    assert moves[0]["holes"][0]["judge"]["relevant"] is True  # asked again, not the bad reply


@pytest.mark.slow
def test_the_calibration_sample_is_seeded(project: Project) -> None:
    config = CONFIG + '\n[judge]\nbase_url = "{url}"\ncalibration_sample = 6\n'
    with FakeAnthropic(api_key=KEY, responder=_answer) as fake:
        (project.root / "retrieval-eval.toml").write_text(
            config.format(url=fake.base_url), encoding="utf-8"
        )
        env = {"ANTHROPIC_API_KEY": KEY}
        first = run_cli(project.root, "run", "--judge", env=env)
        report = json.loads((project.report_dir / "report.json").read_text())
        fake.requests.clear()
        # No budget at all: only the very same pairs, answered from the cache, can be judged.
        again = run_cli(project.root, "run", "--judge", "--max-cost-usd", "0", env=env)
        repeated = json.loads((project.report_dir / "report.json").read_text())
    assert first.returncode == again.returncode == 1, first.log + again.log
    calibration = report["datasets"][0]["calibration"]
    assert (calibration["labelled_relevant"], calibration["labelled_other"]) == (3, 3)
    assert [r for r in fake.requests if is_label_call(r)] == []
    assert repeated["datasets"][0]["calibration"] == {**calibration, "cost_usd": 0.0}
