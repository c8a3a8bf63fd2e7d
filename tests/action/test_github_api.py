"""The real PyGithub client against the fake API: retries, limits, identities, redaction."""

from __future__ import annotations

import time

import pytest
from pydantic import SecretStr

from retrieval_eval.action.github_api import GITHUB_ACTIONS_BOT, GitHubApi, GitHubApiError
from tests.support.fake_github import FakeGitHub, Fault
from tests.support.runner_env import TOKEN

HEAD = "a" * 40


def client(
    github: FakeGitHub, *, budget: float = 30.0, token: str = TOKEN, timeout: int = 15
) -> GitHubApi:
    # backoff_factor=0: urllib3 retries at once, so the tests never wait real seconds.
    return GitHubApi(
        token=SecretStr(token),
        api_url=github.base_url,
        repository="octo/notes",
        retry_budget_seconds=budget,
        backoff_factor=0,
        timeout=timeout,
        seconds_between_writes=0,
    )


def set_status(api: GitHubApi, description: str = "passed") -> None:
    api.create_status(
        HEAD,
        state="success",
        description=description,
        context="retrieval-eval",
        target_url="http://run",
    )


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried_until_success(github: FakeGitHub, status: int) -> None:
    github.inject(Fault(path="/statuses/", status=status, times=2))
    set_status(client(github))
    assert len(github.requests_to("POST", "/statuses/")) == 3
    assert [s["state"] for s in github.statuses_for(HEAD)] == ["success"]


def test_editing_a_comment_is_retried_too(github: FakeGitHub) -> None:
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    api = client(github)
    comment = api.create_comment(7, "first")
    github.inject(Fault(path="/issues/comments/", method="PATCH", status=502, times=2))
    assert api.edit_comment(7, comment.id, "second").body == "second"
    assert len(github.requests_to("PATCH", "/issues/comments/")) == 3


def test_429_with_retry_after_is_retried(github: FakeGitHub) -> None:
    github.inject(Fault(path="/pulls/7/files", status=429, headers={"Retry-After": "0"}))
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40, files=["a.md"])
    assert [f.filename for f in client(github).pull_request_files(7)] == ["a.md"]
    assert len(github.requests_to("GET", "/pulls/7/files")) == 2


def test_secondary_rate_limit_403_with_retry_after_is_retried(github: FakeGitHub) -> None:
    body = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}
    github.inject(
        Fault(
            path="/issues/7/comments",
            method="POST",
            status=403,
            body=body,
            headers={"Retry-After": "0"},
        )
    )
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    comment = client(github).create_comment(7, "hello")
    assert comment.body == "hello"
    assert len(github.requests_to("POST", "/issues/7/comments")) == 2


def test_a_plain_403_is_not_retried(github: FakeGitHub) -> None:
    github.inject(
        Fault(
            path="/statuses/",
            status=403,
            times=None,
            body={"message": "Resource not accessible by integration"},
        )
    )
    with pytest.raises(GitHubApiError) as caught:
        set_status(client(github))
    assert str(caught.value) == (
        "setting status 'retrieval-eval' on aaaaaaa: GitHub answered 403: "
        "Resource not accessible by integration"
    )
    assert len(github.requests_to("POST", "/statuses/")) == 1


@pytest.mark.parametrize("status", [401, 404, 422])
def test_client_errors_are_never_retried(github: FakeGitHub, status: int) -> None:
    github.inject(Fault(path="/statuses/", status=status, times=None, body={"message": "no"}))
    with pytest.raises(GitHubApiError, match=f"GitHub answered {status}: no"):
        set_status(client(github))
    assert len(github.requests_to("POST", "/statuses/")) == 1


def test_a_status_description_over_140_characters_is_rejected_with_gitHubs_message(
    github: FakeGitHub,
) -> None:
    with pytest.raises(GitHubApiError) as caught:
        set_status(client(github), description="x" * 141)
    assert str(caught.value) == (
        "setting status 'retrieval-eval' on aaaaaaa: GitHub answered 422: Validation Failed; "
        "description is too long (maximum is 140 characters)"
    )


def test_a_retry_after_longer_than_the_budget_fails_at_once_instead_of_waiting(
    github: FakeGitHub,
) -> None:
    github.inject(Fault(path="/statuses/", status=503, headers={"Retry-After": "3600"}, times=None))
    started = time.monotonic()
    with pytest.raises(GitHubApiError, match="GitHub answered 503"):
        set_status(client(github, budget=60))
    assert time.monotonic() - started < 5
    assert len(github.requests_to("POST", "/statuses/")) == 1


def test_zero_budget_means_no_retries(github: FakeGitHub) -> None:
    github.inject(Fault(path="/statuses/", status=502, times=1))
    with pytest.raises(GitHubApiError, match="GitHub answered 502: injected fault"):
        set_status(client(github, budget=0))
    assert len(github.requests_to("POST", "/statuses/")) == 1


def test_budget_is_shared_by_all_calls_of_a_run(github: FakeGitHub) -> None:
    """Waits already spent by earlier calls count: a 1 s wait no longer fits, so none is slept."""
    api = client(github, budget=2)
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    github.inject(Fault(path="/pulls/7$", status=429, headers={"Retry-After": "0"}))
    assert api.pull_request_head_sha(7) == HEAD  # a free retry: nothing spent
    assert api.retry_budget.spent == 0
    api.retry_budget.spent = 1.5  # as if earlier calls had waited 1.5 s
    github.inject(Fault(path="/pulls/7$", status=429, headers={"Retry-After": "1"}))
    started = time.monotonic()
    with pytest.raises(GitHubApiError, match="GitHub answered 429"):
        api.pull_request_head_sha(7)
    assert time.monotonic() - started < 0.9
    assert len(github.requests_to("GET", "/pulls/7$")) == 3


def test_dropped_connections_are_retried(github: FakeGitHub) -> None:
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    github.inject(Fault(path="/pulls/7$", drop=True, times=2))
    assert client(github).pull_request_head_sha(7) == HEAD
    assert len(github.requests_to("GET", "/pulls/7$")) == 3


def test_a_slow_answer_times_out_and_is_retried(github: FakeGitHub) -> None:
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    github.inject(Fault(path="/pulls/7$", delay=3.0, times=1))
    assert client(github, timeout=1).pull_request_head_sha(7) == HEAD
    assert len(github.requests_to("GET", "/pulls/7$")) == 2


def test_an_unreachable_api_is_a_clear_error(github: FakeGitHub) -> None:
    api = client(github, budget=0)
    github.stop()
    with pytest.raises(GitHubApiError) as caught:
        set_status(api)
    assert str(caught.value) == (
        "setting status 'retrieval-eval' on aaaaaaa: "
        "could not reach the GitHub API (connection failed)"
    )


def test_wrong_token_is_401_and_the_token_is_not_in_the_message(github: FakeGitHub) -> None:
    with pytest.raises(GitHubApiError) as caught:
        client(github, token="ghs_wrong-token-value").comments(7)
    assert str(caught.value) == "listing the comments of #7: GitHub answered 401: Bad credentials"
    assert "ghs_wrong" not in repr(caught.value)
    sent = github.requests[-1].headers["Authorization"]
    assert sent == "token ghs_wrong-token-value"


def test_the_workflow_token_identity_is_the_actions_bot(github: FakeGitHub) -> None:
    assert client(github).own_login() == GITHUB_ACTIONS_BOT
    assert github.routes() == ["GET /user"]


def test_a_personal_token_identity_is_its_user() -> None:
    with FakeGitHub(token=TOKEN, user={"login": "release-bot", "id": 7, "type": "User"}) as github:
        assert client(github).own_login() == "release-bot"


def test_pull_request_files_follow_link_pagination_and_keep_both_names_of_renames(
    github: FakeGitHub,
) -> None:
    rows: list[str | dict[str, object]] = [f"notes/{i:03}.md" for i in range(230)]
    rows.append(
        {
            "filename": "datasets/new.jsonl",
            "previous_filename": "datasets/old.jsonl",
            "status": "renamed",
        }
    )
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40, files=rows)
    files = client(github).pull_request_files(7)
    assert len(files) == 231
    assert files[-1].filename == "datasets/new.jsonl"
    assert files[-1].previous_filename == "datasets/old.jsonl"
    pages = github.requests_to("GET", "/pulls/7/files")
    assert [r.query.get("page", ["1"])[0] for r in pages] == ["1", "2", "3"]
    assert all(r.query["per_page"] == ["100"] for r in pages)


def test_file_at_reads_the_base_version_and_none_when_absent(github: FakeGitHub) -> None:
    github.put_content("b" * 40, "baseline.json", '{"schema_version": 1}')
    api = client(github)
    assert api.file_at("baseline.json", "b" * 40) == b'{"schema_version": 1}'
    assert api.file_at("baseline.json", "c" * 40) is None
    assert github.requests[0].query == {"ref": ["b" * 40]}


def test_a_server_echoing_the_token_does_not_get_it_into_our_message(github: FakeGitHub) -> None:
    github.inject(Fault(path="/statuses/", status=400, body={"message": f"bad token {TOKEN}"}))
    with pytest.raises(GitHubApiError) as caught:
        set_status(client(github))
    assert str(caught.value) == (
        "setting status 'retrieval-eval' on aaaaaaa: GitHub answered 400: bad token ***"
    )


def test_a_baseline_over_1_mb_is_read_through_the_blob_api(github: FakeGitHub) -> None:
    big = b'{"queries": "' + b"x" * 1_200_000 + b'"}'
    github.put_content("b" * 40, "baseline.json", big)
    assert client(github).file_at("baseline.json", "b" * 40) == big
    assert [r.path.split("/")[4] for r in github.requests] == ["contents", "git"]


def test_label_events_come_oldest_first_across_pages_with_who_added_each(
    github: FakeGitHub,
) -> None:
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    for number in range(130):  # past the first page of 100
        github.label_event(7, f"other-{number}", actor="bot")
    github.label_event(7, "retrieval-eval: accept", actor="maria")
    github.label_event(7, "retrieval-eval: accept", actor="maria", event="unlabeled")

    events = client(github).label_events(7)

    assert len(events) == 132
    assert [(e.event, e.label, e.actor) for e in events[-2:]] == [
        ("labeled", "retrieval-eval: accept", "maria"),
        ("unlabeled", "retrieval-eval: accept", "maria"),
    ]


@pytest.mark.parametrize("permission", ["admin", "write", "read", "none"])
def test_a_users_permission_is_what_github_reports(github: FakeGitHub, permission: str) -> None:
    github.set_permission("maria", permission)
    assert client(github).permission("maria") == permission


def test_a_failed_permission_call_names_the_user(github: FakeGitHub) -> None:
    github.inject(Fault(path="/collaborators/", status=404))
    with pytest.raises(
        GitHubApiError, match="reading the permission of maria: GitHub answered 404"
    ):
        client(github).permission("maria")


def test_label_events_carry_githubs_time(github: FakeGitHub) -> None:
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    github.label_event(7, "retrieval-eval: accept", actor="maria")
    github.label_event(7, "retrieval-eval: accept", actor="maria", event="unlabeled")
    first, second = client(github).label_events(7)
    assert first.created_at < second.created_at
    assert first.created_at.tzinfo is not None


def test_a_contexts_statuses_come_oldest_first_across_pages(github: FakeGitHub) -> None:
    api = client(github)
    assert api.statuses(HEAD, "retrieval-eval") == []
    api.create_status(
        HEAD, state="pending", description="x", context="other", target_url="http://run"
    )
    for number in range(120):  # past the first page of 100 (the listing is newest first)
        set_status(api, f"run {number}")

    statuses = api.statuses(HEAD, "retrieval-eval")

    assert [s.description for s in statuses] == [f"run {n}" for n in range(120)]
    created = [s["created_at"] for s in github.statuses_for(HEAD)][1:]
    assert [s.created_at.strftime("%Y-%m-%dT%H:%M:%SZ") for s in statuses] == created
    assert {s.state for s in statuses} == {"success"}


def test_merged_pulls_name_the_pull_request_a_commit_was_merged_as(github: FakeGitHub) -> None:
    merge = "c" * 40
    github.add_pull(7, head_sha=HEAD, base_sha="b" * 40)
    github.label_event(7, "retrieval-eval: accept", actor="maria")
    api = client(github)
    assert api.merged_pulls(merge) == []
    assert api.merged_pulls(HEAD) == []  # the head of an open pull request: not merged

    github.merge_pull(7, merge_commit_sha=merge)

    [pull] = api.merged_pulls(merge)
    assert (pull.number, pull.head_sha, pull.labels) == (7, HEAD, ("retrieval-eval: accept",))
    assert github.requests_to("GET", rf"/commits/{merge}/pulls$")
