"""The sticky comment against the fake API, through the real PyGithub client."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from retrieval_eval.action.comment import (
    MAX_COMMENT_CHARS,
    compose_body,
    marker,
    post_comment,
    room_for_report,
)
from retrieval_eval.action.github_api import GitHubApi
from tests.security.entry import new_world
from tests.support.fake_github import GITHUB_ACTIONS_BOT, FakeGitHub
from tests.support.runner_env import TOKEN

HUMAN = {"login": "alice", "id": 1, "type": "User"}

SHA = "a" * 40  # every comment the Action posts names the commit it reports on


def api_for(github: FakeGitHub) -> GitHubApi:
    return GitHubApi(
        token=SecretStr(TOKEN),
        api_url=github.base_url,
        repository="octo/notes",
        retry_budget_seconds=0,
        seconds_between_writes=0,
    )


def seeded(github: FakeGitHub) -> GitHubApi:
    github.add_pull(7, head_sha="a" * 40, base_sha="b" * 40)
    return api_for(github)


def test_marker_carries_the_evaluation_id() -> None:
    assert marker("docs-search") == "<!-- retrieval-eval:docs-search -->"


def test_first_run_creates_then_later_runs_update_the_same_comment(github: FakeGitHub) -> None:
    api = seeded(github)
    first = post_comment(
        api,
        number=7,
        body=compose_body("main", "run 1", evaluated=SHA),
        comment_id="main",
        mode="update",
    )
    second = post_comment(
        api,
        number=7,
        body=compose_body("main", "run 2", evaluated=SHA),
        comment_id="main",
        mode="update",
    )
    assert (first.action, second.action) == ("created", "updated")
    assert first.url == second.url
    comments = github.comments_on(7)
    assert len(comments) == 1
    assert comments[0]["body"] == compose_body("main", "run 2", evaluated=SHA)
    assert comments[0]["user"]["login"] == GITHUB_ACTIONS_BOT["login"]


def test_two_evaluations_keep_separate_comments(github: FakeGitHub) -> None:
    api = seeded(github)
    for comment_id in ("docs", "code", "docs"):
        post_comment(
            api,
            number=7,
            body=compose_body(comment_id, comment_id, evaluated=SHA),
            comment_id=comment_id,
            mode="update",
        )
    assert [c["body"] for c in github.comments_on(7)] == [
        compose_body("docs", "docs", evaluated=SHA),
        compose_body("code", "code", evaluated=SHA),
    ]


def test_a_humans_comment_quoting_the_marker_is_left_alone(github: FakeGitHub) -> None:
    api = seeded(github)
    github.add_comment(7, "> <!-- retrieval-eval:main -->\n> why did this regress?", author=HUMAN)
    result = post_comment(
        api,
        number=7,
        body=compose_body("main", "report", evaluated=SHA),
        comment_id="main",
        mode="update",
    )
    assert result.action == "created"
    assert [c["user"]["login"] for c in github.comments_on(7)] == ["alice", "github-actions[bot]"]
    assert github.requests_to("PATCH", "/issues/comments/") == []


def test_new_mode_adds_a_comment_every_run(github: FakeGitHub) -> None:
    api = seeded(github)
    for run in ("1", "2"):
        post_comment(
            api,
            number=7,
            body=compose_body("main", run, evaluated=SHA),
            comment_id="main",
            mode="new",
        )
    assert len(github.comments_on(7)) == 2
    assert github.requests_to("GET", "/issues/7/comments") == []  # no need to look


def test_off_mode_sends_nothing(github: FakeGitHub) -> None:
    api = seeded(github)
    result = post_comment(api, number=7, body="x", comment_id="main", mode="off")
    assert (result.action, result.url) == ("off", "")
    assert github.requests == []


def test_own_comment_is_found_past_the_first_page(github: FakeGitHub) -> None:
    api = seeded(github)
    for i in range(120):
        github.add_comment(7, f"chatter {i}", author=HUMAN)
    github.add_comment(7, compose_body("main", "old", evaluated=SHA), author=GITHUB_ACTIONS_BOT)
    result = post_comment(
        api,
        number=7,
        body=compose_body("main", "new", evaluated=SHA),
        comment_id="main",
        mode="update",
    )
    assert result.action == "updated"
    assert len(github.comments_on(7)) == 121
    assert len(github.requests_to("GET", "/issues/7/comments")) == 2


def test_a_body_at_the_limit_is_accepted_and_an_oversized_one_is_cut_to_fit(
    github: FakeGitHub,
) -> None:
    api = seeded(github)
    # The room left once the marker and the evaluated commit's line are in.
    exact = compose_body("main", "x" * room_for_report("main"), evaluated="a" * 40)
    assert len(exact) == MAX_COMMENT_CHARS
    post_comment(api, number=7, body=exact, comment_id="main", mode="new")
    oversized = compose_body("main", "y" * 70_000)
    assert len(oversized) == MAX_COMMENT_CHARS
    assert oversized.startswith("<!-- retrieval-eval:main -->\nyyy")
    assert oversized.endswith("the full report is in the job summary)\n")
    post_comment(api, number=7, body=oversized, comment_id="main", mode="new")
    assert [len(c["body"]) for c in github.comments_on(7)] == [65_536, 65_536]


def test_a_github_app_token_updates_its_own_comment(tmp_path: Path) -> None:
    """An app's installation token cannot read /user either, and posts as `<app>[bot]`:
    the second run edits that comment instead of adding one more on every push."""
    app = {"login": "retrieval-checks[bot]", "id": 99, "type": "Bot"}
    with FakeGitHub(token=TOKEN, repository="octo/notes", app=app) as github:
        world = new_world(tmp_path, github)
        base = world.head()
        first = world.commit({"README.md": "# notes search, reworded\n"})
        second = world.commit({"README.md": "# notes search, reworded again\n"})

        runs = [world.pull_request(7, base, head) for head in (first, second)]

        assert [run.returncode for run in runs] == [0, 0], runs[-1].log
        [comment] = github.comments_on(7)
        assert comment["user"]["login"] == "retrieval-checks[bot]"
        assert len(github.requests_to("PATCH", "/issues/comments/")) == 1
