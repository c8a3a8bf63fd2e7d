"""A pull request's base commit: its configuration, read before anything the pull
request configures is resolved.

The gate's settings and the trust settings come from there (``retrieval_eval.prepare``
names them), like the baseline: otherwise a pull request could loosen its own gate
(``gated = []``, a wider ``tolerance``, a ``baseline`` path the base commit has no file
at) or widen what its own code may see (drop a name from ``secret_env``, turn the judge on
and send the Anthropic key to its own ``base_url``). The pull request's values for them are
reported as a proposal that takes effect after merging. The retriever, its settings and its
code are the pull request's own: they are what it proposes, and what is evaluated.

A base commit with neither a configuration nor a baseline is the adoption run: the pull
request that adds retrieval-eval is evaluated with its own settings and establishes the
baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.action.baseline_source import (
    at_base,
    named_at_base,
    repo_relative,
    repository_root,
)
from retrieval_eval.action.event import PullRequestActivity
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.fileio import atomic_write_bytes
from retrieval_eval.prepare import BaseCommit, Prepared
from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.settings import CONFIG_FILE_NAME, read_settings


@dataclass(frozen=True)
class BaseInfo:
    commit: BaseCommit
    adoption: bool  # no configuration and no baseline at the base commit

    @property
    def origin(self) -> str:
        return self.commit.origin


def base_commit(
    settings: ActionSettings,
    pull: PullRequestActivity,
    api: GitHubApi,
    *,
    overrides: Mapping[str, object],
    scratch: Path,
) -> BaseInfo:
    """The base commit's configuration, read (not resolved) with this job's inputs on top."""
    workspace = settings.runner.workspace
    base_file, origin, configured = base_config_file(
        workspace=workspace,
        config_input=settings.config,
        base_sha=pull.base_sha,
        fetch_from_api=api.file_at,
        scratch_dir=scratch,
    )
    try:
        base_run = read_settings(
            workdir=workspace,
            config_file=base_file,
            overrides=overrides,
            overrides_source="Action inputs",
        )
    except ConfigError as error:
        raise RetrievalEvalError(
            f"the base commit's configuration ({origin}) is not valid, and the gate's settings "
            f"come from it: {error.message}"
        ) from None
    adoption = False
    if not configured:
        root = repository_root(workspace)
        repo_path = repo_relative(base_run.baseline, root)
        adoption = at_base(root, repo_path, pull.base_sha, api.file_at) is None
    return BaseInfo(BaseCommit(base_run, origin, configured), adoption)


def base_config_file(
    *,
    workspace: Path,
    config_input: Path | None,
    base_sha: str,
    fetch_from_api: Callable[[str, str], bytes | None],
    scratch_dir: Path,
) -> tuple[Path, str, bool]:
    """The base commit's configuration, copied into ``scratch_dir``; where it came from; and
    whether the base commit has one.

    The same file the run would read: the ``config`` input, else ``retrieval-eval.toml``,
    else ``pyproject.toml``. A base commit without one gives an empty file (the defaults).
    """
    root = repository_root(workspace)
    folder = workspace.resolve()
    candidates = ([config_input] if config_input is not None else [folder / CONFIG_FILE_NAME]) + (
        [folder / "pyproject.toml"] if config_input is None else []
    )
    for candidate in candidates:
        repo_path, content = named_at_base(candidate, root, base_sha, fetch_from_api)
        if content is None:
            continue
        if candidate.name == "pyproject.toml" and b"retrieval-eval" not in content:
            continue
        copy = scratch_dir / "base-config" / candidate.name
        atomic_write_bytes(copy, content)
        return copy, f"{repo_path} at the base commit {base_sha[:7]}", True
    empty = scratch_dir / "base-config" / CONFIG_FILE_NAME
    atomic_write_bytes(empty, b"")
    return empty, f"the defaults (the base commit {base_sha[:7]} has no configuration file)", False


def proposal_notice(ready: Prepared) -> str | None:
    """One line for the top of the comment; every value is escaped (it comes from the PR)."""
    if not ready.proposed:
        return None
    changes = "; ".join(f"{escape_markdown(b)} → {escape_markdown(a)}" for b, a in ready.proposed)
    origin = escape_markdown(ready.gate_origin or "")
    return (
        "⚙️ **This pull request changes settings a pull request's run takes from its base "
        "commit (the verdict, what its code may reach, its bounds); each takes effect after "
        "merge.**"
        f" This run used {origin}. Proposed: {changes}."
    )


def adoption_notice() -> str:
    return (
        "🌱 **This pull request adds retrieval-eval.** The base commit has no configuration "
        "and no baseline, so this run is evaluated with the pull request's own settings and "
        "establishes the baseline; the gate starts after merge."
    )
