"""The gate's settings come from the pull request's base commit, like its baseline.

Otherwise a pull request could loosen its own gate in ``retrieval-eval.toml``:
``gated = []``, a narrower ``measures``, a wider ``tolerance``, another
retriever for a dataset, or a ``baseline`` path the base commit has no file at
(which would make the run establish a baseline instead of comparing). Everything
else (where the datasets and corpus are, how each retriever is configured) is the
pull request's own: that is what it proposes.
The pull request's values for the gate's settings are reported as a proposal
that takes effect after merging. The same holds for the trust settings: which
environment variables the retriever must not see, and which folders outside
the repository may be read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.action.baseline_source import named_at_base, repository_root
from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.fileio import atomic_write_bytes
from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.settings import CONFIG_FILE_NAME, RunSettings, load_settings

# Every setting that decides the verdict. A change to one of these in a pull request
# is a proposal: the gate of that same pull request uses the base commit's value.
GATE_SETTINGS = (
    "baseline",
    "tolerance",
    "measures",
    "gated",
    "k",
    "thresholds",
    "dataset_thresholds",
    "dataset_retrievers",
    "min_fixtures",
    "min_human",
    "significance",
    "max_regressed_queries",
    "max_removed_share",
    "repeats",
)
# What the pull request's code may see and read: a PR must not widen either for itself.
# `secret_env` keeps the union of both commits' names (withholding more is always safe);
# `outside_roots` is the base commit's.
TRUST_SETTINGS = ("secret_env", "outside_roots")


@dataclass(frozen=True)
class GateSettings:
    run: RunSettings  # the pull request's settings with the base commit's gate
    origin: str  # "retrieval-eval.toml at the base commit abc1234"
    proposed: tuple[tuple[str, str], ...]  # ("setting: base value", the PR's value)


def base_config_file(
    *,
    workspace: Path,
    config_input: Path | None,
    base_sha: str,
    fetch_from_api: Callable[[str, str], bytes | None],
    scratch_dir: Path,
) -> tuple[Path, str]:
    """The base commit's configuration, copied into ``scratch_dir``; and where it came from.

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
        return copy, f"{repo_path} at the base commit {base_sha[:7]}"
    empty = scratch_dir / "base-config" / CONFIG_FILE_NAME
    atomic_write_bytes(empty, b"")
    return empty, f"the defaults (the base commit {base_sha[:7]} has no configuration file)"


def gate_from_base(
    pr_run: RunSettings,
    *,
    base_file: Path,
    origin: str,
    workspace: Path,
    overrides: Mapping[str, object],
) -> GateSettings:
    """The pull request's settings with every gate setting taken from the base commit."""
    try:
        base_run = load_settings(
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
    update: dict[str, object] = {name: getattr(base_run, name) for name in GATE_SETTINGS}
    # A dataset the base commit does not map is new here (it has no baseline to loosen):
    # it is searched with the retriever the pull request names for it.
    update["dataset_retrievers"] = {**pr_run.dataset_retrievers, **base_run.dataset_retrievers}
    update["outside_roots"] = base_run.outside_roots
    update["secret_env"] = tuple(dict.fromkeys((*base_run.secret_env, *pr_run.secret_env)))
    proposed = tuple(
        change
        for name in (*GATE_SETTINGS, *TRUST_SETTINGS)
        for change in _changes(
            name, getattr(base_run, name), getattr(pr_run, name), workspace.resolve()
        )
    )
    return GateSettings(run=pr_run.model_copy(update=update), origin=origin, proposed=proposed)


def _changes(name: str, base: object, pr: object, workspace: Path) -> list[tuple[str, str]]:
    """(base, PR) as text, one pair per changed entry of a table, or one for a value."""
    if base == pr:
        return []
    if isinstance(base, Mapping) and isinstance(pr, Mapping):
        return [
            (f"{name}.{key}: {_show(base.get(key), workspace)}", _show(pr.get(key), workspace))
            for key in sorted({*base, *pr}, key=str)
            if base.get(key) != pr.get(key)
        ]
    return [(f"{name}: {_show(base, workspace)}", _show(pr, workspace))]


def _show(value: object, workspace: Path) -> str:
    if isinstance(value, Path):  # as the configuration file names it, not the runner's path
        inside = value.is_relative_to(workspace)
        return value.relative_to(workspace).as_posix() if inside else str(value)
    if value is None:
        return "(none)"
    if value is False:
        return "off"
    if hasattr(value, "describe"):  # a threshold: "≥ 0.7"
        return str(value.describe())
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_defaults=True)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_show(v, workspace) for v in value) + "]"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def proposal_notice(gate: GateSettings) -> str | None:
    """One line for the top of the comment; every value is escaped (it comes from the PR)."""
    if not gate.proposed:
        return None
    changes = "; ".join(f"{escape_markdown(b)} → {escape_markdown(a)}" for b, a in gate.proposed)
    return (
        "⚙️ **This pull request changes settings that decide the verdict; each takes effect "
        f"after merge.** This run used {escape_markdown(gate.origin)}. Proposed: {changes}."
    )
