"""`retrieval-eval label` through the console script, with the real anthropic client against
a Messages API on 127.0.0.1: the pool of the gated retriever and a challenger is judged
once, a second run asks nothing, a changed document, model or prompt is judged again, the
budget stops it with what was judged written, and a bad judgments line names its place."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from retrieval_eval.load.judgments import read_judgments, text_sha256
from retrieval_eval.score.label_judge import LABEL_PROMPT_SHA256
from tests.compare.conftest import Project
from tests.support.action import Run, run_cli
from tests.support.fake_anthropic import FakeAnthropic

KEY = "sk-ant-test-label-7731"
QUERIES = {
    "j-01": "lemon tart pastry",
    "j-02": "token bucket rate limiter",
    "j-03": "roast chicken lemon garlic",
}
# What the fake judge calls relevant (score 0.9), partly relevant (0.6); the rest 0.1.
RELEVANT = {("j-01", "recipes/lemon-tart"), ("j-02", "software/rate-limit")}
PARTLY = {("j-01", "recipes/lemon-chicken"), ("j-03", "recipes/lemon-chicken")}
CONFIG = """\
[dataset_retrievers]
"keyword.jsonl" = "bm25"
"queries.jsonl" = "bm25"

[judged]
pool_depth = 3

[challengers.substring]
retriever = "like"

[judge]
base_url = "{base_url}"
max_cost_usd = {budget}
"""


def answer(body: dict[str, Any]) -> tuple[int, str]:
    prompt = body["messages"][0]["content"]
    query = re.search(r"^Query: (.*)$", prompt, re.MULTILINE)
    document = re.search(r"^Document \((.*)\):$", prompt, re.MULTILINE)
    assert query is not None and document is not None, prompt
    query_id = next(qid for qid, text in QUERIES.items() if text == query.group(1))
    pair = (query_id, document.group(1))
    score = 0.9 if pair in RELEVANT else 0.6 if pair in PARTLY else 0.1
    return 200, json.dumps({"score": score})


def judged_project(tmp_path: Path) -> Project:
    """The small keyword project with a judged tier of ``QUERIES`` and no judgments yet."""
    project = Project(tmp_path)
    judged = project.datasets / "judged"
    judged.mkdir()
    (judged / "queries.jsonl").write_text(
        "".join(json.dumps({"query_id": q, "query": t}) + "\n" for q, t in QUERIES.items()),
        encoding="utf-8",
    )
    return project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return judged_project(tmp_path)


def label(
    project: Project, fake: FakeAnthropic, *flags: str, budget: float = 1.0, **env: str
) -> Run:
    config = CONFIG.format(base_url=fake.base_url, budget=budget)
    (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
    done = run_cli(project.root, "label", *flags, env={"ANTHROPIC_API_KEY": KEY, **env})
    assert KEY not in done.log
    return done


def judgments_file(project: Project) -> Path:
    return project.datasets / "judged" / "judgments.jsonl"


def test_the_pool_is_judged_once_and_a_second_run_asks_nothing(project: Project) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        first = label(project, fake)
        calls = len(fake.requests)
        second = label(project, fake)
        second_calls = len(fake.requests) - calls
    assert first.returncode == 0, first.log
    judged = read_judgments(judgments_file(project))
    # Every pooled pair judged, each stamped with the model, prompt and document text hash.
    assert calls == len(judged) > 0
    assert {q for q, _ in judged} == set(QUERIES)
    assert judged[("j-01", "recipes/lemon-tart")].grade == 2
    assert judged[("j-01", "recipes/lemon-chicken")].grade == 1
    assert judged.relevant("j-02") == {"software/rate-limit": 2}
    for judgment in judged.values():
        assert judgment.judge_model == "claude-haiku-4-5"
        assert judgment.prompt_sha256 == LABEL_PROMPT_SHA256
        assert len(judgment.doc_sha256) == 64
    # bm25's top 3 and the `like` challenger's together: more than bm25 alone for j-03
    # (LIKE matches every note that holds "lemon"), at most 3 + 3 a query.
    assert all(len(judged.graded(q)) <= 6 for q in QUERIES)
    lines = judgments_file(project).read_text(encoding="utf-8").splitlines()
    pairs = [(json.loads(x)["query_id"], json.loads(x)["doc_id"]) for x in lines]
    assert pairs == sorted(pairs)  # sorted, so a diff shows what changed
    assert f"judged {calls} pairs ({calls} new, 0 stale re-judged" in first.stdout
    assert "already current: 0" in first.stdout
    assert "input + " in first.stdout and "output tokens" in first.stdout
    cost = calls * (1200 * 1.0 + 8 * 5.0) / 1_000_000
    assert f"${cost:.4f}" in first.stdout
    assert "top bm25 and substring for 3 queries" in first.stdout
    # The second run: everything current, no call, the file untouched.
    assert second.returncode == 0, second.log
    assert second_calls == 0
    assert f"already current: {calls}; to judge: 0 new, 0 stale" in second.stdout
    assert read_judgments(judgments_file(project)) == judged


@pytest.mark.slow
def test_a_changed_document_is_judged_again_and_only_it(project: Project) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        assert label(project, fake).returncode == 0
        before = read_judgments(judgments_file(project))
        fake.requests.clear()
        note = project.corpus / "recipes" / "lemon-tart.md"
        note.write_text(
            note.read_text(encoding="utf-8") + "\nServe it with cream.\n", encoding="utf-8"
        )
        again = label(project, fake)
        asked = [r.body["messages"][0]["content"] for r in fake.requests]
    assert again.returncode == 0, again.log
    stale = [pair for pair in before if pair[1] == "recipes/lemon-tart"]
    assert len(asked) == len(stale) > 0
    assert all("Serve it with cream." in prompt for prompt in asked)
    after = read_judgments(judgments_file(project))
    for pair in stale:
        assert after[pair].doc_sha256 != before[pair].doc_sha256
    assert {p: j for p, j in after.items() if p not in stale} == {
        p: j for p, j in before.items() if p not in stale
    }
    assert f"0 new, {len(stale)} stale (another model, prompt or document text)" in again.stdout


@pytest.mark.slow
def test_another_model_or_prompt_makes_every_judgment_stale(project: Project) -> None:
    path = judgments_file(project)
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        assert label(project, fake).returncode == 0
        first = read_judgments(path)
        # Judgments recorded with an older prompt template: all of them judged again (the
        # reply cache answers, since the question asked today is the same).
        old_prompt = text_sha256("an older prompt")
        path.write_text(path.read_text(encoding="utf-8").replace(LABEL_PROMPT_SHA256, old_prompt))
        fake.requests.clear()
        reprompted = label(project, fake)
        assert fake.requests == []
        assert reprompted.returncode == 0, reprompted.log
        assert f"0 new, {len(first)} stale" in reprompted.stdout
        assert read_judgments(path) == first
        # Another model: every pair is a new question, asked of that model.
        config = CONFIG.format(base_url=fake.base_url, budget=1.0) + 'model = "claude-opus-4-1"\n'
        (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
        remodelled = run_cli(project.root, "label", env={"ANTHROPIC_API_KEY": KEY})
        models = {r.body["model"] for r in fake.requests}
    assert remodelled.returncode == 0, remodelled.log
    assert len(fake.requests) == len(first) and models == {"claude-opus-4-1"}
    assert {j.judge_model for j in read_judgments(path).values()} == {"claude-opus-4-1"}


@pytest.mark.slow
def test_the_budget_stops_it_and_what_was_judged_is_kept(project: Project) -> None:
    # Each call could cost up to (prompt chars / 2 + 200) input and 32 output tokens; the
    # fake bills 1,200 input and 8 output tokens ($0.00124). $0.004 buys three calls, then
    # the next call's worst case would pass it.
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        stopped = label(project, fake, budget=0.004)
        paid = len(fake.requests)
        kept = read_judgments(judgments_file(project))
        fake.requests.clear()
        rest = label(project, fake, "--max-cost-usd", "1")
        rest_calls = len(fake.requests)
    assert stopped.returncode == 0, stopped.log
    assert paid == 3
    assert len(kept) == paid
    assert "budget reached:" in stopped.stdout and "--max-cost-usd" in stopped.stdout
    # The best-ranked documents of every query first: each query has its top document.
    assert len({q for q, _ in kept}) == min(paid, len(QUERIES))
    assert rest.returncode == 0, rest.log
    total = len(read_judgments(judgments_file(project)))
    assert rest_calls == total - paid > 0
    assert f"already current: {paid};" in rest.stdout


@pytest.mark.slow
def test_without_the_key_the_cached_and_current_pairs_pass_and_the_rest_is_an_error(
    project: Project,
) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        assert label(project, fake).returncode == 0
        judged = read_judgments(judgments_file(project))
        config = CONFIG.format(base_url=fake.base_url, budget=1.0)
        (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
        current = run_cli(project.root, "label")
        (project.corpus / "recipes" / "lemon-sorbet.md").write_text(
            "# Lemon sorbet\n\nLemon, sugar and water, churned; lemon tart's lighter cousin.\n",
            encoding="utf-8",
        )
        missing = run_cli(project.root, "label")
        calls = len(fake.requests)
    assert current.returncode == 0, current.log
    assert missing.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in missing.stderr
    assert calls == len(judged)  # no call without the key
    assert read_judgments(judgments_file(project)) == judged


def test_a_bad_judgments_line_names_its_file_and_line(project: Project) -> None:
    path = judgments_file(project)
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        assert label(project, fake).returncode == 0
        lines = path.read_text(encoding="utf-8").splitlines()
        record = json.loads(lines[1])
        record["grade"] = "relevant"
        lines[1] = json.dumps(record)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        fake.requests.clear()
        done = label(project, fake)
        assert fake.requests == []
    assert done.returncode == 2
    assert (
        "datasets/judged/judgments.jsonl:2: grade must be a whole number ≥ 0 (0 = not "
        'relevant), not "relevant"' in done.stderr
    )


def test_the_tier_needs_a_retriever_for_its_queries_file(project: Project) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        config = CONFIG.format(base_url=fake.base_url, budget=1.0).replace(
            '"queries.jsonl" = "bm25"\n', ""
        )
        (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
        done = run_cli(project.root, "label", env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 2
    assert "no retriever is configured for queries.jsonl" in done.stderr
    assert fake.requests == [] and not judgments_file(project).exists()


def test_a_challenger_that_cannot_run_is_said_and_not_pooled(project: Project) -> None:
    with FakeAnthropic(api_key=KEY, responder=answer) as fake:
        config = CONFIG.format(base_url=fake.base_url, budget=1.0) + (
            '\n[challengers.remote]\nretriever = "http"\n\n[challengers.remote.http]\n'
            'url = "http://127.0.0.1:9/search"\nheaders_env = { X-Key = "REMOTE_KEY" }\n'
        )
        (project.root / "retrieval-eval.toml").write_text(config, encoding="utf-8")
        done = run_cli(project.root, "label", env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 0, done.log
    assert "warning: challenger remote is not pooled:" in done.stderr
    assert "REMOTE_KEY" in done.stderr
    assert "top bm25 and substring for 3 queries" in done.stdout


def test_a_judge_that_never_answers_is_stopped_by_time_limit_s(project: Project) -> None:
    """The Messages API on 127.0.0.1 takes the connection and never answers (nothing
    accepts it, nothing reads it): only `time_limit_s` ends the run, exit 2, naming it.
    The bound leaves room for pooling on a loaded machine; the queued connection shows
    the run was waiting on the judge when it was stopped."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        config = CONFIG.format(base_url=base_url, budget=1.0)
        (project.root / "retrieval-eval.toml").write_text(
            "time_limit_s = 15\n" + config + "max_retries = 0\ntimeout_s = 3600\n",
            encoding="utf-8",
        )
        done = run_cli(project.root, "label", env={"ANTHROPIC_API_KEY": KEY})
        silent.setblocking(False)
        silent.accept()[0].close()  # the run did reach the judge: its connection waits
    assert done.returncode == 2, done.log
    assert "took longer than time_limit_s (15 s)" in done.stderr, done.stderr
    assert "raise time_limit_s in the configuration" in done.stderr
    assert KEY not in done.log
