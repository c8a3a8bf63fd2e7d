"""The judged tier through `retrieval-eval action` on a real git repository, with the real
anthropic client against a Messages API on 127.0.0.1.

A push on main labels what its top k holds (the run may write: judgments.jsonl) and records
the tier's values and the judge's agreement with the human tier in baseline.json. A pull
request whose retriever loses the tier's relevant documents then fails only while that
agreement clears the base commit's floor; the pull request's own `[judge]` and `[judged]`
values (base URL, model, budget, floor, even `enabled`) change nothing; a fork's pull
request, which gets no key, reports the tier without gating; the documents new in the top
k are judged on the fly and not committed; a second run makes no call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.action.git_repo import commit_all, git, init_repo, write
from tests.action.project import FIXTURES, NOTES, fixture_lines
from tests.action.test_main_scenarios import Repo, branch
from tests.support.action import ActionRun
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow

KEY = "sk-ant-test-judged-tier-0740"
BASE_MODEL = "claude-base-judge"
EXPECTED = {query_id: doc for query_id, _, doc in FIXTURES}
HUMAN_TEXT = {query: query_id for query_id, query, _ in FIXTURES}
DOCS = sorted(NOTES)
# The judged tier: eight questions from the logs, each with one document the judge finds
# relevant (the note it is about).
TIER = {
    "j-01": ("what to cook with eggs and tomatoes", "recipes/shakshuka"),
    "j-02": ("an Italian rice dish", "recipes/risotto"),
    "j-03": ("things to do in Lisbon", "travel/lisbon"),
    "j-04": ("where to sleep in Kyoto", "travel/kyoto"),
    "j-05": ("a book about concentration", "books/deep-work"),
    "j-06": ("how to release safely", "software/deploy"),
    "j-07": ("designing a web API", "software/api-design"),
    "j-08": ("notes from a walk", "journal/2024-03-01"),
}
TIER_TEXT = {query: query_id for query_id, (query, _) in TIER.items()}


def _other(doc: str, step: int = 1) -> str:
    return DOCS[(DOCS.index(doc) + step) % len(DOCS)]


# Main's retriever: every query's own document first, then a neighbour (an unlabelled top hit
# for the human queries: the calibration's other class).
BASE_RUN = {
    **{qid: [doc, _other(doc)] for qid, doc in EXPECTED.items()},
    **{qid: [doc, _other(doc)] for qid, (_, doc) in TIER.items()},
}
# The pull request's retriever: the human queries as before, the tier's lose their document;
# the second document of each is one main never ranked for it: judged on the fly.
PR_RUN = {
    **{qid: BASE_RUN[qid] for qid in EXPECTED},
    **{qid: [_other(doc), _other(doc, 2)] for qid, (_, doc) in TIER.items()},
}

CONFIG = """\
gate_rule = "any-metric"
min_fixtures = 3
min_human = 1

[dataset_retrievers]
"keyword.jsonl" = "run-file"
"queries.jsonl" = "run-file"

[retrievers.run-file]
path = "run.trec"

[thresholds]
"mrr@10" = false
"ndcg@10" = false
"p@5" = false

[judge]
model = "{model}"
base_url = "{base_url}"
calibration_sample = 12
max_cost_usd = {budget}

[judged]
enabled = {enabled}
kappa_floor = {floor}
"""


def config(
    base_url: str,
    *,
    model: str = BASE_MODEL,
    budget: str = "1.0",
    enabled: str = "true",
    floor: str = "0.6",
) -> str:
    return CONFIG.format(
        base_url=base_url, model=model, budget=budget, enabled=enabled, floor=floor
    )


def run_file(ranking: dict[str, list[str]]) -> str:
    return "".join(
        f"{qid} Q0 {doc} {rank} {100 - rank} hand\n"
        for qid, docs in ranking.items()
        for rank, doc in enumerate(docs, start=1)
    )


def tier_queries() -> str:
    return "".join(
        json.dumps({"query_id": qid, "query": query}) + "\n" for qid, (query, _) in TIER.items()
    )


def responder(*, agrees: bool) -> Any:
    """The judge: on the tier, relevant only the query's own note; on the human queries, the
    human labels (``agrees``) or "relevant" to everything (κ 0: no better than chance)."""

    def answer(body: dict[str, Any]) -> tuple[int, str]:
        prompt = body["messages"][0]["content"]
        query = re.search(r"^Query: (.*)$", prompt, re.MULTILINE)
        document = re.search(r"^Document \((.*)\):$", prompt, re.MULTILINE)
        assert query is not None and document is not None, prompt
        text, doc = query.group(1), document.group(1)
        if text in TIER_TEXT:
            relevant = TIER[TIER_TEXT[text]][1] == doc
        else:
            relevant = not agrees or EXPECTED[HUMAN_TEXT[text]] == doc
        return 200, json.dumps({"score": 0.95 if relevant else 0.05})

    return answer


def new_repo(root: Path, fake: FakeAnthropic) -> None:
    files = {f"datasets/corpus/{doc}.md": text for doc, text in NOTES.items()}
    files["datasets/keyword.jsonl"] = fixture_lines()
    files["datasets/judged/queries.jsonl"] = tier_queries()
    files["run.trec"] = run_file(BASE_RUN)
    files["retrieval-eval.toml"] = config(fake.base_url)
    files[".gitignore"] = "retrieval-eval-report/\n.retrieval-eval-cache/\n"
    init_repo(root)
    write(root, files)
    commit_all(root, "notes search with a judged tier")


def push(repo: Repo, sha: str, *, key: str | None = KEY) -> ActionRun:
    return repo.push(sha, extra_env={} if key is None else {"ANTHROPIC_API_KEY": key})


def pull_request(
    repo: Repo, number: int, base: str, head: str, *, fork: bool = False, action: str = "opened"
) -> ActionRun:
    # A fork's pull request gets no secrets: the workflow passes an empty key.
    env = {} if fork else {"ANTHROPIC_API_KEY": KEY}
    result = repo.pull_request(number, base, head, fork=fork, action=action, extra_env=env)
    # `::add-mask::KEY` is the one line that must name it: the runner consumes it.
    logged = [line for line in result.log.splitlines() if not line.startswith("::add-mask::")]
    assert not any(KEY in line for line in logged) and KEY not in result.summary
    return result


def report(repo: Repo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (repo.path / "retrieval-eval-report" / "report.json").read_text(encoding="utf-8")
    )
    return data


def established_main(repo: Repo, fake: FakeAnthropic) -> str:
    """Main's push run: the tier labelled on the fly, its values and the agreement recorded."""
    first = git(repo.path, "rev-parse", "HEAD")
    pushed = push(repo, first)
    assert pushed.returncode == 0, pushed.log
    tier = report(repo)["judged_tier"]
    # Every (query, document) of the tier's top k was judged: 8 queries x 2 documents.
    assert (tier["judged_on_the_fly"], tier["judgments_written"]) == (16, True)
    assert tier["judged_at_k"] == 1.0
    judgments = (repo.path / "datasets/judged/judgments.jsonl").read_text(encoding="utf-8")
    assert len(judgments.splitlines()) == 16
    baseline = json.loads((repo.path / "baseline.json").read_text(encoding="utf-8"))
    assert baseline["judged_tier"]["aggregates"]["ndcg@10"] == 1.0
    assert baseline["judge_agreement"]["model"] == BASE_MODEL
    assert baseline["judge_agreement"]["sample_size"] == 12
    assert {r.body["model"] for r in fake.requests} == {BASE_MODEL}
    return commit_all(repo.path, "retrieval-eval: baseline, judgments")


def regressing_pr(repo: Repo, main: str, name: str, *, pr_config: str) -> str:
    branch(repo, main, name)
    return repo.commit({"run.trec": run_file(PR_RUN), "retrieval-eval.toml": pr_config}, name)


# The pull request's own judge and tier settings: another gateway (nothing listens on port 9),
# another model, no budget, a floor nobody reaches and the tier switched off. None of them is
# the base commit's, so none of them is used.
def hostile_config() -> str:
    return config(
        "http://127.0.0.1:9", model="claude-pr-model", budget="0.0", enabled="false", floor="1.0"
    )


@pytest.fixture
def workspace(tmp_path: Path, github: FakeGitHub) -> Repo:
    return Repo(
        path=tmp_path / "workspace", runs=tmp_path / "runs", github=github, api_url=github.base_url
    )


def test_a_calibrated_judge_lets_a_tier_regression_fail_with_the_base_commits_judge(
    workspace: Repo,
) -> None:
    with FakeAnthropic(api_key=KEY, responder=responder(agrees=True)) as fake:
        new_repo(workspace.path, fake)
        main = established_main(workspace, fake)
        assert report(workspace)["judged_tier"]["agreement"]["kappa"] == 1.0
        head = regressing_pr(workspace, main, "worse-tier", pr_config=hostile_config())
        calls_before = len(fake.requests)

        result = pull_request(workspace, 41, main, head)
        assert result.returncode == 1, result.log
        assert result.outputs["verdict"] == "regression"
        # The base's model, through the base's gateway: only the 8 new pairs were asked
        # about (the agreement is the baseline's, for this model and prompt).
        asked = fake.requests[calls_before:]
        assert len(asked) == 8 and {r.body["model"] for r in asked} == {BASE_MODEL}
        tier = report(workspace)["judged_tier"]
        assert (tier["gates"], tier["not_gating"], tier["kappa_floor"]) == (True, None, 0.6)
        assert tier["agreement"]["source"] == "recorded"
        assert (tier["judged_on_the_fly"], tier["judgments_written"]) == (8, False)
        assert tier["report"]["aggregates"]["ndcg@10"]["value"] == 0.0
        # Not committed on a pull request: the file is main's.
        assert git(workspace.path, "status", "--porcelain", "datasets/judged").strip() == ""

        [comment] = workspace.github.comments_on(41)
        body = comment["body"]
        headline = report(workspace)["headline"]
        assert headline.startswith("Regression: queries.jsonl (judged) "), headline  # the tier
        assert "queries.jsonl (judged) MRR@10 1.000 → 0.000" in body, body
        assert "Judged tier" in body and "gates the verdict" in body
        assert "Cohen's κ 1.00 on 12 pairs (floor 0.60" in body
        assert "8 pairs new in the top k judged on the fly" in body
        assert "retrieval-eval label" in body
        # Beside the human tier, not in it: the human dataset still passes.
        human = report(workspace)["datasets"][0]
        assert all(row["status"] != "regressed" for row in human["rows"])

        # A second run of the same pull request asks nothing: the replies are cached.
        calls_before = len(fake.requests)
        again = pull_request(workspace, 41, main, head, action="synchronize")
        assert again.returncode == 1, again.log
        assert len(fake.requests) == calls_before

        # A fork's pull request has no key: the tier is reported and does not gate.
        fork = pull_request(workspace, 42, main, head, fork=True)
        assert fork.returncode == 0, fork.log
        assert fork.outputs["verdict"] == "passed"
        assert len(fake.requests) == calls_before
        tier = report(workspace)["judged_tier"]
        assert (tier["gates"], tier["not_gating"]) == (False, "no-key")
        assert tier["judged_at_k"] == 0.5  # only main's documents are judged
        # A fork's token cannot comment: the job summary is where it is read.
        assert "reported, not gated" in fork.summary
        assert "Not gated: ANTHROPIC\\_API\\_KEY is not set" in fork.summary


def test_a_judge_below_the_floor_keeps_a_tier_regression_out_of_the_verdict(
    workspace: Repo,
) -> None:
    with FakeAnthropic(api_key=KEY, responder=responder(agrees=False)) as fake:
        new_repo(workspace.path, fake)
        main = established_main(workspace, fake)
        assert report(workspace)["judged_tier"]["agreement"]["kappa"] == 0.0
        # The pull request lowers the floor to 0, which its κ would clear: not its to set.
        own_floor = config(fake.base_url, floor="0.0")
        head = regressing_pr(workspace, main, "worse-tier", pr_config=own_floor)

        result = pull_request(workspace, 43, main, head)
        assert result.returncode == 0, result.log
        assert result.outputs["verdict"] == "passed"
        tier = report(workspace)["judged_tier"]
        assert (tier["gates"], tier["not_gating"]) == (False, "below-floor")
        rows = {row["metric"]: row["status"] for row in tier["report"]["rows"]}
        assert rows["ndcg@10"] == "not-gated"
        [comment] = workspace.github.comments_on(43)
        assert (
            "Not gated: the judge agrees with your people at κ 0.00 on 12 pairs, below the "
            "floor of 0.60" in comment["body"]
        )
