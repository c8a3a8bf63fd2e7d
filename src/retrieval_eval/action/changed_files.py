"""Which files a pull request changes: from the API, else from git, else "unknown".

"Unknown" makes the caller evaluate: skipping on doubt would let a change
through ungated. Renamed files count under both names, since moving a dataset
out of a watched folder changes what is evaluated as much as editing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.action.git import run_git
from retrieval_eval.action.github_api import FileChange, GitHubApiError

# GitHub lists at most this many files of a pull request; beyond it the listing is incomplete.
API_FILES_LIMIT = 3000


@dataclass(frozen=True)
class ChangedFiles:
    paths: frozenset[str] | None  # None: could not be determined
    source: str  # "api", "git", or why it is unknown

    @property
    def known(self) -> bool:
        return self.paths is not None


def names_of(changes: Iterable[FileChange]) -> frozenset[str]:
    names: set[str] = set()
    for change in changes:
        names.add(change.filename)
        if change.previous_filename:
            names.add(change.previous_filename)
    return frozenset(names)


def changed_files(
    *,
    list_from_api: Callable[[], list[FileChange]],
    declared_count: int | None,
    workspace: Path,
    base_sha: str,
    head_sha: str,
) -> ChangedFiles:
    reason = ""
    if declared_count is None or declared_count < API_FILES_LIMIT:
        try:
            changes = list_from_api()
        except GitHubApiError as error:
            reason = f"the API could not list them ({error})"
        else:
            if declared_count is not None and len(changes) < declared_count:
                # A listing cut short (a page lost on the way) would skip on what it lacks.
                reason = f"the API listed {len(changes)} of the {declared_count} files"
            elif declared_count is None and not changes:
                # Nothing says how many to expect: an empty page (a hiccup, a proxy) is doubt,
                # and a pull request changes at least one file.
                reason = "the API listed no files and the event payload gives no count"
            elif len(changes) < API_FILES_LIMIT:
                return ChangedFiles(names_of(changes), "api")
            else:
                reason = f"the API lists at most {API_FILES_LIMIT} files"
    else:
        reason = f"the pull request changes {declared_count} files, more than the API lists"
    from_git = _git_diff_names(workspace, base_sha, head_sha)
    if from_git is not None:
        return ChangedFiles(from_git, "git")
    return ChangedFiles(None, f"{reason}, and git history lacks {base_sha[:7]}..{head_sha[:7]}")


def _git_diff_names(workspace: Path, base_sha: str, head_sha: str) -> frozenset[str] | None:
    """Names relative to the repository root, both sides of renames; None without the history."""
    # Three dots: changes since the merge base, which is what GitHub lists for a pull request.
    output = run_git(workspace, "diff", "--name-status", "-M", "-z", f"{base_sha}...{head_sha}")
    if output is None:
        return None  # shallow clone, or not a git repository
    fields = output.decode("utf-8", errors="replace").split("\0")
    names: set[str] = set()
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        width = 2 if status[:1] in {"R", "C"} else 1  # renames and copies name two paths
        names.update(fields[i + 1 : i + 1 + width])
        i += 1 + width
    return frozenset(names)
