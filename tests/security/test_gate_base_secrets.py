"""A pull request cannot send a secret its base commit withholds to a server it chooses.

Threat: the base commit serves a dataset with the `http` retriever, authenticated by
`headers_env = {Authorization = "SEARCH_TOKEN"}`, and lists `DEPLOY_*` in `secret_env`.
A pull request edits only retrieval-eval.toml: `url` points at its own server, a header
`X-Deploy` is read from DEPLOY_KEY, and `secret_env` is gone. A service's `url` and
`headers_env` receive a secret, so they are resource bounds of the retriever table: the base
commit's. The run searches the base commit's server with the base commit's headers, and
the pull request's server is never asked. A pull request that moves a dataset to a service
the base commit does not configure gets no `headers_env` at all, and the base commit's
`secret_env` is withheld before anything it configures is resolved. The same holds for the LLM
judge: on a pull request `[judge] enabled` and `base_url` are the base commit's, so a pull
request cannot send ANTHROPIC_API_KEY to an address of its choosing.
"""

from __future__ import annotations

import json

import pytest

from tests.action.project import CONFIG, NOTES
from tests.render.github_html import read
from tests.security.harness import Repo
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.services import SearchService, search_service

pytestmark = pytest.mark.slow

DEPLOY_KEY = "deploy-key-0123456789-SECRET"
SEARCH_TOKEN = "search-token-abcdef-SECRET"


def _http_config(url: str, headers: dict[str, str], secret_env: list[str]) -> str:
    header_table = ", ".join(f"{name} = {json.dumps(var)}" for name, var in headers.items())
    return (
        (f"secret_env = {json.dumps(secret_env)}\n" if secret_env else "")
        + CONFIG
        + '\n[dataset_retrievers]\n"keyword.jsonl" = "http"\n\n[retrievers.http]\n'
        + f"url = {json.dumps(url)}\nheaders_env = {{ {header_table} }}\n"
    )


def test_a_pr_cannot_send_a_base_withheld_secret_to_its_own_server(repo: Repo) -> None:
    documents = dict(NOTES)
    ours, theirs = SearchService(documents), SearchService(documents)
    with search_service(ours) as our_url, search_service(theirs) as their_url:
        main = repo.commit(
            {
                "retrieval-eval.toml": _http_config(
                    our_url, {"Authorization": "SEARCH_TOKEN"}, ["DEPLOY_*"]
                )
            },
            "search through our service",
        )
        repo.branch("feature", main)
        head = repo.commit(
            {
                "retrieval-eval.toml": _http_config(
                    their_url, {"Authorization": "SEARCH_TOKEN", "X-Deploy": "DEPLOY_KEY"}, []
                )
            },
            "point the retriever at another server, with one more header",
        )
        run = repo.pull_request(
            40, main, head, extra_env={"SEARCH_TOKEN": SEARCH_TOKEN, "DEPLOY_KEY": DEPLOY_KEY}
        )

    sent = [value for headers in (*ours.headers, *theirs.headers) for value in headers.values()]
    assert DEPLOY_KEY not in sent
    assert theirs.headers == []  # the pull request's server is never asked
    assert ours.headers and all(h["Authorization"] == SEARCH_TOKEN for h in ours.headers)
    assert not any("X-Deploy" in h for h in ours.headers)
    assert run.returncode == 0, run.log
    assert [line for line in run.log.splitlines() if DEPLOY_KEY in line] == [
        f"::add-mask::{DEPLOY_KEY}"
    ]
    assert DEPLOY_KEY not in run.comment
    page = read(run.comment).text
    assert "retrievers.http.url" in page and "retrievers.http.headers_env" in page
    assert "takes effect after merge" in page


def test_a_pr_moving_to_a_service_of_its_own_sends_it_no_secret(repo: Repo) -> None:
    documents = dict(NOTES)
    theirs = SearchService(documents)
    main = repo.commit(
        {"retrieval-eval.toml": 'secret_env = ["DEPLOY_*"]\n' + CONFIG}, "withhold DEPLOY_*"
    )
    repo.branch("feature", main)
    with search_service(theirs) as their_url:
        head = repo.commit(
            {"retrieval-eval.toml": _http_config(their_url, {"X-Deploy": "DEPLOY_KEY"}, [])},
            "search through my own service, with a header",
        )
        run = repo.pull_request(43, main, head, extra_env={"DEPLOY_KEY": DEPLOY_KEY})
    sent = [value for headers in theirs.headers for value in headers.values()]
    assert DEPLOY_KEY not in sent
    assert DEPLOY_KEY not in run.comment
    assert "retrievers.http.headers_env" in read(run.comment).text


def test_a_pr_cannot_turn_the_judge_on_and_send_the_key_to_its_own_address(
    repo: Repo,
) -> None:
    with FakeAnthropic(api_key="sk-ant-real-key") as theirs:
        main = repo.head()
        repo.branch("feature", main)
        head = repo.commit(
            {
                "retrieval-eval.toml": CONFIG
                + f"\n[judge]\nenabled = true\nbase_url = {json.dumps(theirs.base_url)}\n"
            },
            "turn the judge on, at my own address",
        )
        run = repo.pull_request(41, main, head, extra_env={"ANTHROPIC_API_KEY": "sk-ant-real-key"})
    assert theirs.requests == []
    assert run.returncode == 0, run.log
    page = read(run.comment).text
    assert "judge.enabled: off → on" in page
    assert "judge.base_url" in page and "takes effect after merge" in page


def test_a_pr_cannot_raise_the_judges_budget(repo: Repo) -> None:
    """The label judgements spend the base repository's Anthropic budget: the cap is the
    base commit's, and the pull request's value is a proposal for after the merge."""
    main = repo.head()
    repo.branch("feature", main)
    head = repo.commit(
        {"retrieval-eval.toml": CONFIG + "\n[judge]\nmax_cost_usd = 500.0\n"},
        "a bigger budget for the judge",
    )
    run = repo.pull_request(42, main, head)
    assert run.returncode == 0, run.log
    page = read(run.comment).text
    assert "judge.max_cost_usd: 1.0 → 500.0" in page
    assert "takes effect after merge" in page
