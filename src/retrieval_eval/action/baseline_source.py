"""Which baseline a pull request is gated against: by default the one at its base commit.

Otherwise a PR could loosen its own gate by lowering the numbers in
``baseline.json``. The base version is read through the contents API (the
Action's image has no git); where git and the history are there it is read with
``git show`` instead. A PR that changes the file is flagged loudly either way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.action.git import run_git
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.fileio import atomic_write_bytes
from retrieval_eval.render.escape import escape_markdown


@dataclass(frozen=True)
class BaselineChoice:
    path: Path  # the file the run compares against (may not exist: baseline-null rule)
    repo_path: str  # the baseline's path in the repository, for messages
    changed_by_pr: bool
    origin: str  # "base commit abc1234" or "workspace"


def repository_root(workspace: Path) -> Path:
    completed = run_git(workspace, "rev-parse", "--show-toplevel")
    return Path(completed.decode().strip()) if completed is not None else workspace


def repo_relative(path: Path, root: Path) -> str:
    """``path`` as the repository names it. Symlinks in the working tree are not followed:
    they are the pull request's, and must not choose which file of the base commit is read."""
    named = Path(os.path.normpath(path))
    if named.is_relative_to(root.resolve()):
        return named.relative_to(root.resolve()).as_posix()
    return path.name


def redirected(path: Path) -> bool:
    """Whether the working tree's ``path`` is, or lies under, a symlink."""
    return path.is_symlink() or path.parent.resolve() != Path(os.path.normpath(path.parent))


def _at_base_from_git(root: Path, repo_path: str, base_sha: str) -> tuple[bool, bytes | None]:
    """(history has the commit, file bytes or None if absent there)."""
    if run_git(root, "cat-file", "-e", f"{base_sha}^{{commit}}") is None:
        return False, None
    if run_git(root, "cat-file", "-e", f"{base_sha}:{repo_path}") is None:
        return True, None
    return True, run_git(root, "show", f"{base_sha}:{repo_path}")


def at_base(
    root: Path, repo_path: str, base_sha: str, fetch_from_api: Callable[[str, str], bytes | None]
) -> bytes | None:
    """A file as it is at the base commit (None: absent there): from git, else the API."""
    in_history, content = _at_base_from_git(root, repo_path, base_sha)
    if in_history:
        return content
    try:
        return fetch_from_api(repo_path, base_sha)
    except RetrievalEvalError as error:
        raise RetrievalEvalError(
            f"cannot read {repo_path} at the base commit {base_sha[:7]}: {error}. "
            "Give the workflow `contents: read` permission "
            "or set `baseline-source: workspace`"
        ) from None


def named_at_base(
    path: Path, root: Path, base_sha: str, fetch_from_api: Callable[[str, str], bytes | None]
) -> tuple[str, bytes | None]:
    """The repository path of the working tree's ``path`` and its bytes at the base commit.

    When the base commit has no such file and the pull request made ``path`` a symlink (or
    put it under one), the run stops: the file it points to would be read from the pull
    request's tree, or "no file at the base" would mean "nothing to compare with".
    """
    repo_path = repo_relative(path, root)
    content = at_base(root, repo_path, base_sha, fetch_from_api)
    if content is None and redirected(path):
        raise RetrievalEvalError(
            f"{repo_path} is a symbolic link, or lies under one, and the base commit "
            f"{base_sha[:7]} has no file by that name. The gate reads it from the base commit "
            "by the name the configuration gives, never through a link; name the file itself"
        )
    return repo_path, content


def baseline_at_base(
    *,
    workspace_baseline: Path,
    workspace: Path,
    base_sha: str,
    changed_paths: frozenset[str] | None,
    fetch_from_api: Callable[[str, str], bytes | None],
    scratch_dir: Path,
) -> BaselineChoice:
    root = repository_root(workspace)
    repo_path, content = named_at_base(workspace_baseline, root, base_sha, fetch_from_api)
    chosen = scratch_dir / workspace_baseline.name  # same name, so the report reads naturally
    chosen.unlink(missing_ok=True)
    if content is not None:
        atomic_write_bytes(chosen, content)
    return BaselineChoice(
        path=chosen,
        repo_path=repo_path,
        changed_by_pr=_changed(repo_path, changed_paths, workspace_baseline, content),
        origin=f"base commit {base_sha[:7]}",
    )


def baseline_in_workspace(
    *, workspace_baseline: Path, workspace: Path, changed_paths: frozenset[str] | None
) -> BaselineChoice:
    repo_path = repo_relative(workspace_baseline, repository_root(workspace))
    changed = changed_paths is not None and repo_path in changed_paths
    return BaselineChoice(workspace_baseline, repo_path, changed, "workspace")


def _changed(
    repo_path: str, changed_paths: frozenset[str] | None, workspace_file: Path, base: bytes | None
) -> bool:
    if changed_paths is not None:
        return repo_path in changed_paths
    current = workspace_file.read_bytes() if workspace_file.is_file() else None
    return current != base


def change_notice(choice: BaselineChoice) -> str:
    path = escape_markdown(choice.repo_path)
    if choice.origin == "workspace":
        return (
            f"⚠️ **This pull request changes {path}**, and this evaluation gates "
            "against the pull request's own version (`baseline-source: workspace`). "
            "Review the new baseline values before merging."
        )
    return (
        f"⚠️ **This pull request changes {path}.** The gate used the version at the "
        f"{choice.origin}, so the new values take effect only after merging. "
        "Review them before merging."
    )
