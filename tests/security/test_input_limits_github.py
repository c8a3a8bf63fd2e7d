"""Threat: GitHub (or the token it is given) misbehaves. The run ends within the retry
budget, and says precisely what went wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.action.project import FIXTURES, fixture_lines
from tests.security.entry import World, world_in
from tests.support.fake_github import Fault


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def test_a_hung_api_is_given_up_on_within_the_retry_budget(world: World) -> None:
    """Each attempt waits for its answer at most the budget, and the budget counts those
    waits too: with a 2 s budget, a status call that never answers cannot hold the job
    for 15 s per attempt (the suite's 120 s safety net would catch what once took 244 s)."""
    sha = world.head()
    world.github.inject(Fault(path=r"/statuses/", method="POST", delay=600, times=None))

    run = world.push(sha, github_retry_seconds="2")

    assert run.returncode == 2, run.log
    assert "GitHub did not answer in time" in run.stdout
    assert len(world.github.requests_to("POST", r"/statuses/")) <= 2


SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


def test_a_secondary_rate_limit_is_named_as_such(world: World) -> None:
    sha = world.head()
    world.github.inject(
        Fault(
            path=r"/statuses/",
            method="POST",
            status=403,
            headers={"Retry-After": "120"},
            body={"message": SECONDARY},
            times=None,
        )
    )

    run = world.push(sha, github_retry_seconds="2")

    assert run.returncode == 2, run.log
    [line] = [x for x in run.stdout.splitlines() if "publishing failed" in x]
    assert "secondary rate limit" in line
    assert "120 s" in line and "github-retry-seconds" in line
    assert "(no message)" not in line


def test_a_token_that_is_not_ascii_is_a_bad_input_not_a_bug(world: World) -> None:
    sha = world.head()

    run = world.push(sha, github_token="ghs_t\u00f6ken\u20ac-pasted-wrong")

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert "input &#96;github-token&#96;" in run.summary  # escaped as in the comment
    assert "unexpected" not in run.log and "bug" not in run.log
    logged = [line for line in run.log.splitlines() if not line.startswith("::add-mask::")]
    assert "t\u00f6ken" not in "\n".join(logged) + run.summary  # never quoted back


def test_an_answer_that_never_finishes_is_given_up_on_within_the_retry_budget(
    world: World,
) -> None:
    """A broken proxy sends the headers, then a byte every second: every read gets data
    before its timeout, so only a deadline on the whole call can end it."""
    sha = world.head()
    world.github.inject(Fault(path=r"/statuses/", method="POST", trickle=1.0, times=None))

    run = world.push(sha, github_retry_seconds="2")

    assert run.returncode == 2, run.log
    assert "GitHub did not answer in time" in run.stdout


# What a broken proxy or a truncated answer can look like: 200, but not a full file listing.
NOT_A_LISTING = {
    "an error object": {"message": "Server Error"},
    "an html page": "<html><body>Bad gateway</body></html>",
    "rows without names": [{"status": "modified"}],
    "a name that is not text": [{"filename": 5}],
    "an empty name": [{"filename": ""}],
    "a null row": [None],
    "the first of two pages": [{"filename": "README.md", "status": "modified"}],
}


@pytest.mark.parametrize("case", sorted(NOT_A_LISTING))
def test_a_malformed_file_listing_never_skips_the_evaluation(world: World, case: str) -> None:
    """`paths` watches the datasets; the pull request changes one (and the README). An
    answer that does not list them must lead to git or to "unknown", and so to evaluating,
    never to "no watched file changed"."""
    base = world.head()
    head = world.commit(
        {
            "README.md": "# notes search, reworded\n",
            "datasets/keyword.jsonl": fixture_lines(FIXTURES[:5]),
        }
    )
    world.github.inject(
        Fault(path=r"/pulls/\d+/files", method="GET", status=200, body=NOT_A_LISTING[case])
    )

    run = world.pull_request(9, base, head, paths="datasets/**")

    assert run.outputs["verdict"] != "skipped", run.log
    assert run.outputs["verdict"] != "error", run.log
    [status] = world.github.statuses_for(head)
    assert "skipped" not in status["description"]
