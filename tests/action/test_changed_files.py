from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from retrieval_eval.action.changed_files import ChangedFiles, changed_files
from retrieval_eval.action.github_api import FileChange, GitHubApi, GitHubApiError
from tests.action.git_repo import commit_all, git, init_repo, write
from tests.support.fake_github import FakeGitHub, Fault
from tests.support.runner_env import TOKEN


def repo_with_a_pull_request(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    init_repo(repo)
    write(repo, {"datasets/old.jsonl": "{}\n", "README.md": "hi\n"})
    base = commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "mv", "datasets/old.jsonl", "datasets/new.jsonl")
    write(repo, {"src/app.py": "print()\n"})
    head = commit_all(repo, "head")
    return repo, base, head


def fail() -> list[FileChange]:
    raise GitHubApiError(
        "listing the files of pull request #7: GitHub answered 502: injected fault"
    )


def test_the_api_listing_is_used_when_it_works(tmp_path: Path, github: FakeGitHub) -> None:
    github.add_pull(
        7,
        head_sha="a" * 40,
        base_sha="b" * 40,
        files=[
            "src/app.py",
            {
                "filename": "datasets/new.jsonl",
                "previous_filename": "datasets/old.jsonl",
                "status": "renamed",
            },
        ],
    )
    api = GitHubApi(
        token=SecretStr(TOKEN),
        api_url=github.base_url,
        repository="octo/notes",
        retry_budget_seconds=0,
    )
    result = changed_files(
        list_from_api=lambda: api.pull_request_files(7),
        declared_count=2,
        workspace=tmp_path,
        base_sha="b" * 40,
        head_sha="a" * 40,
    )
    assert result == ChangedFiles(
        frozenset({"src/app.py", "datasets/new.jsonl", "datasets/old.jsonl"}), "api"
    )


def test_an_api_failure_falls_back_to_git_diff_with_both_rename_names(tmp_path: Path) -> None:
    repo, base, head = repo_with_a_pull_request(tmp_path)
    result = changed_files(
        list_from_api=fail, declared_count=2, workspace=repo, base_sha=base, head_sha=head
    )
    assert result == ChangedFiles(
        frozenset({"src/app.py", "datasets/new.jsonl", "datasets/old.jsonl"}), "git"
    )


def test_more_files_than_the_api_lists_goes_to_git_without_asking_the_api(tmp_path: Path) -> None:
    repo, base, head = repo_with_a_pull_request(tmp_path)
    asked: list[bool] = []

    def listing() -> list[FileChange]:
        asked.append(True)
        return []

    result = changed_files(
        list_from_api=listing, declared_count=3001, workspace=repo, base_sha=base, head_sha=head
    )
    assert result.source == "git" and asked == []


def test_a_listing_cut_at_3000_is_not_trusted(tmp_path: Path) -> None:
    repo, base, head = repo_with_a_pull_request(tmp_path)
    listing = [FileChange(f"f{i}", None) for i in range(3000)]
    result = changed_files(
        list_from_api=lambda: listing,
        declared_count=None,
        workspace=repo,
        base_sha=base,
        head_sha=head,
    )
    assert result.source == "git"
    assert result.paths == frozenset({"src/app.py", "datasets/new.jsonl", "datasets/old.jsonl"})


def test_without_history_the_answer_is_unknown_so_the_caller_evaluates(tmp_path: Path) -> None:
    result = changed_files(
        list_from_api=fail,
        declared_count=2,
        workspace=tmp_path,
        base_sha="b" * 40,
        head_sha="a" * 40,
    )
    assert result.paths is None and not result.known
    assert result.source == (
        "the API could not list them (listing the files of pull request #7: GitHub answered 502: "
        "injected fault), and git history lacks bbbbbbb..aaaaaaa"
    )


def test_the_api_is_retried_before_falling_back(tmp_path: Path, github: FakeGitHub) -> None:
    github.add_pull(7, head_sha="a" * 40, base_sha="b" * 40, files=["src/app.py"])
    github.inject(Fault(path="/pulls/7/files", status=502, times=1))
    api = GitHubApi(
        token=SecretStr(TOKEN),
        api_url=github.base_url,
        repository="octo/notes",
        retry_budget_seconds=5,
        backoff_factor=0,
    )
    result = changed_files(
        list_from_api=lambda: api.pull_request_files(7),
        declared_count=1,
        workspace=tmp_path,
        base_sha="b" * 40,
        head_sha="a" * 40,
    )
    assert result == ChangedFiles(frozenset({"src/app.py"}), "api")
