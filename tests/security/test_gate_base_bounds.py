"""A pull request cannot lift its own bounds: prices, budgets, times and sizes are the base's.

Threat: the judge's label calls spend the base repository's Anthropic key against a
budget the base commit sets, and the budget is counted with the prices the configuration
gives. A pull request that prices the judge at nothing (`input_usd_per_mtok = 0`,
`output_usd_per_mtok = 0`) would make every call look free and spend past the budget; one
that sets a retriever's `timeout_s = 1e6` would hang the job with no status. Every option
not declared as under test is read from the base commit, so each of these, set in the pull
request alone, changes nothing about the run: not the verdict, not the calls made, not the
time bounds. The pull request's values are reported as proposals for after the merge.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from tests.action.project import CONFIG
from tests.render.github_html import read
from tests.security.harness import Repo, Run
from tests.support.fake_anthropic import FakeAnthropic, RecordedRequest

pytestmark = pytest.mark.slow

KEY = "sk-ant-base-budget-0451"


def _label_calls(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if "You label search results." in str(r.body)]


def _judge(fake: FakeAnthropic) -> str:
    return (
        f"\n[judge]\nenabled = true\nbase_url = {json.dumps(fake.base_url)}\n"
        "max_cost_usd = 0.002\ncalibration_sample = 20\n"
    )


def _pull_request(repo: Repo, number: int, extra: str, cache: str) -> Run:
    main = repo.head()
    repo.branch(f"feature-{number}", main)
    head = repo.commit({"retrieval-eval.toml": CONFIG + extra}, "the pull request's settings")
    return repo.pull_request(
        number, main, head, extra_env={"ANTHROPIC_API_KEY": KEY}, cache_dir=cache
    )


def test_a_pr_pricing_its_own_judge_at_nothing_spends_what_the_base_would(repo: Repo) -> None:
    with FakeAnthropic(api_key=KEY) as fake:
        judge = _judge(fake)
        repo.establish_baseline()
        main = repo.commit({"retrieval-eval.toml": CONFIG + judge}, "the judge, on a budget")
        fake.requests.clear()

        control = _pull_request(repo, 50, judge, "cache-control")
        control_calls = len(_label_calls(fake))
        fake.requests.clear()
        repo.branch("main", main)
        free = judge + "input_usd_per_mtok = 0\noutput_usd_per_mtok = 0\n"
        attack = _pull_request(repo, 51, free, "cache-attack")
        attack_calls = len(_label_calls(fake))

    assert control.returncode == 0, control.log
    assert attack.returncode == 0, attack.log
    assert 0 < control_calls <= 3  # the $0.002 budget stops it after a couple of calls
    assert attack_calls == control_calls
    assert attack.outputs["verdict"] == control.outputs["verdict"]
    page = read(attack.comment).text
    assert "judge.input_usd_per_mtok" in page and "judge.output_usd_per_mtok" in page
    assert "takes effect after merge" in page


# Every bound of the retriever tables the project can hold without a service, set in the pull
# request alone to a value unlike the base's (the default): times, sizes, prices, retries.
PR_BOUNDS = """
[retrievers.dense]
batch_size = 1
token_budget = 300
threads = 1

[retrievers.hybrid.claude]
input_usd_per_mtok = 0.0
output_usd_per_mtok = 0.0
max_retries = 9
timeout_s = 3000.0
base_url = "http://127.0.0.1:9"
passage_chars = 50000

[retrievers.custom]
command = ["./search"]
timeout_s = 3000.0
"""


def _used_settings(run: Run) -> dict[str, Any]:
    """The run's settings as the Action logs them in its Configuration group."""
    lines = run.log.split("::group::Configuration", 1)[1].splitlines()
    start = lines.index("{")
    end = lines.index("}", start)
    used: dict[str, Any] = json.loads("\n".join(lines[start : end + 1]))
    used["retrievers"]["dense"].pop("model_dir")  # under each run's own HOME
    return used


def test_a_pr_cannot_lift_the_bounds_of_its_retriever_tables(repo: Repo) -> None:
    repo.establish_baseline()
    main = repo.head()
    control = _pull_request(repo, 52, "", "cache")
    repo.branch("main", main)
    attack = _pull_request(repo, 53, PR_BOUNDS, "cache")

    assert attack.returncode == control.returncode == 0, attack.log
    assert attack.outputs["verdict"] == control.outputs["verdict"]
    used, base = _used_settings(attack), _used_settings(control)
    assert used["retrievers"]["dense"] == base["retrievers"]["dense"]
    assert used["retrievers"]["hybrid"] == base["retrievers"]["hybrid"]
    # The pull request's own table is kept, with the base commit's (default) time bound.
    assert used["retrievers"]["custom"]["command"] == ["./search"]
    assert used["retrievers"]["custom"]["timeout_s"] == 120.0
    page = read(attack.comment).text
    for key in ("dense.batch_size", "hybrid.claude.timeout_s", "custom.timeout_s"):
        assert f"retrievers.{key}" in page
    assert "takes effect after merge" in page


def test_a_pr_timeout_beyond_the_hard_cap_is_a_configuration_error(repo: Repo) -> None:
    """`timeout_s = 1e6` once hung the job with no status; no timeout may pass an hour."""
    repo.establish_baseline()
    for number, value in ((54, "1e6"), (55, "inf")):
        main = repo.head()
        custom = f'\n[retrievers.custom]\ncommand = ["{sys.executable}"]\ntimeout_s = {value}\n'
        run = _pull_request(repo, number, custom, "cache")
        repo.branch("main", main)
        assert run.returncode == 2, run.log
        assert run.outputs["verdict"] == "error"
        # The key's line: the last of the file, after the appended table.
        assert re.search(
            r"retrieval-eval\.toml:\d+: bad value for 'retrievers\.custom\.timeout_s'", run.log
        ), run.log
        assert run.statuses[-1]["state"] == "error"


# A command retriever that reads what it is sent and never answers.
SILENT = "import sys\nsys.stdin.read()\n"


def test_the_whole_evaluation_is_bounded_by_the_base_commits_time_limit(repo: Repo) -> None:
    """A retriever that never answers within its own `timeout_s` still cannot hold the job:
    the base commit's `time_limit_s` ends the run with an `error` status naming the step.
    The pull request's own, larger, `time_limit_s` changes nothing."""
    repo.establish_baseline()
    silent = (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = [{json.dumps(sys.executable)}, "silent.py"]\n'
    )
    main = repo.commit({"retrieval-eval.toml": "time_limit_s = 3\n" + CONFIG}, "a tight time bound")
    repo.branch("feature", main)
    head = repo.commit(
        {"retrieval-eval.toml": "time_limit_s = 19800\n" + CONFIG + silent, "silent.py": SILENT},
        "a retriever that never answers",
    )
    run = repo.pull_request(56, main, head)

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert "took longer than time_limit_s (3 s)" in run.log
    assert "stopped in the step 'indexing for custom'" in run.log
    assert run.statuses[-1]["state"] == "error"
    assert "time_limit_s" in run.statuses[-1]["description"]
    assert "time_limit_s: 3.0" in read(run.comment).text  # the PR's value, a proposal
