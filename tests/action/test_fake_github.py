"""The fake API behaves like GitHub where clients notice (helper G's container tests rely on it)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from github import Auth, Github

from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN


def test_requests_without_a_token_are_401(github: FakeGitHub) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(f"{github.base_url}/repos/octo/notes", timeout=5)
    assert caught.value.code == 401
    assert json.loads(caught.value.read()) == {"message": "Bad credentials"}


def test_contents_can_be_put_and_read_back_through_pygithub(github: FakeGitHub) -> None:
    client = Github(auth=Auth.Token(TOKEN), base_url=github.base_url, retry=None)
    repo = client.get_repo("octo/notes")
    repo.create_file("baseline.json", "establish baseline", '{"v": 1}', branch="main")
    assert github.contents[("main", "baseline.json")] == b'{"v": 1}'
    assert repo.get_contents("baseline.json", ref="main").decoded_content == b'{"v": 1}'  # type: ignore[union-attr]
    assert repo.full_name == "octo/notes"


def test_statuses_can_be_listed_newest_first(github: FakeGitHub) -> None:
    client = Github(auth=Auth.Token(TOKEN), base_url=github.base_url, retry=None)
    commit = client.get_repo("octo/notes").get_commit("a" * 40)
    commit.create_status("pending", description="running", context="retrieval-eval")
    commit.create_status("success", description="passed", context="retrieval-eval")
    assert [s.state for s in commit.get_statuses()] == ["success", "pending"]
