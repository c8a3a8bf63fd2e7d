"""A pull request's run settings: each key from the commit the option table names.

Built from both commits' settings, as read (nothing they name in the environment is
resolved yet). Whatever is not declared as under test is the base commit's, so a new
setting, or a new key in a retriever's table, is held to the base until it is declared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from retrieval_eval.config.table import commit_of
from retrieval_eval.settings import Commit, RunSettings


def from_base(own: RunSettings, base: RunSettings, *, gate_from_base: bool) -> RunSettings:
    """``own`` (the pull request's settings) with every key the table does not give the pull
    request taken from ``base``. ``gate_from_base`` False (the adoption run, or
    ``baseline-source: workspace``): the gate's keys are the pull request's too. A
    challenger's retriever tables take their bounds from the base commit's
    ``[retrievers]``, as the gated retriever's do."""
    merged = _Merge(base, gate_from_base).merge(own, base, ())
    assert isinstance(merged, RunSettings)
    return merged


class _Merge:
    def __init__(self, root: RunSettings, gate_from_base: bool) -> None:
        self.root = root
        self.gate_from_base = gate_from_base

    def merge(self, own: Any, base: Any, path: tuple[str, ...]) -> Any:
        if path:
            commit = commit_of(path, type(self.root))
            if commit is Commit.UNION:
                return tuple(dict.fromkeys((*base, *own)))
            if commit is Commit.BASE or (commit is Commit.GATE and self.gate_from_base):
                return base
            if path == ("challengers",):
                return {
                    name: self.merge(challenger, None, (*path, name))
                    for name, challenger in own.items()
                }
        if not isinstance(own, BaseModel):
            return own
        update: dict[str, Any] = {}
        for name, field in type(own).model_fields.items():
            value = getattr(own, name)
            if base is not None:
                under = getattr(base, name)
            elif path[:1] == ("challengers",) and len(path) == 2 and name == "retrievers":
                under = self.root.retrievers
            else:
                under = _default(field, value)
            merged = self.merge(value, under, (*path, name))
            if merged is not value:
                update[name] = merged
        return own.model_copy(update=update) if update else own


def proposals(own: RunSettings, used: RunSettings, workspace: Path) -> tuple[tuple[str, str], ...]:
    """(the key and the value used, the pull request's value) for every key the pull
    request sets that this run does not use: each is a proposal for after the merge."""
    return tuple(_differences(used, own, (), workspace))


def _differences(
    used: Any, own: Any, path: tuple[str, ...], workspace: Path
) -> list[tuple[str, str]]:
    if used == own:
        return []
    name = ".".join(path)
    if isinstance(used, BaseModel) and isinstance(own, BaseModel) and type(used) is type(own):
        return [
            change
            for field in type(own).model_fields
            for change in _differences(
                getattr(used, field), getattr(own, field), (*path, field), workspace
            )
        ]
    if isinstance(used, Mapping) and isinstance(own, Mapping):
        if path == ("challengers",):
            return [
                change
                for key in own
                if key in used
                for change in _differences(used[key], own[key], (*path, key), workspace)
            ]
        return [
            (f"{name}.{key}: {_show(used.get(key), workspace)}", _show(own.get(key), workspace))
            for key in sorted({*used, *own}, key=str)
            if used.get(key) != own.get(key)
        ]
    return [(f"{name}: {_show(used, workspace)}", _show(own, workspace))]


def _show(value: object, workspace: Path) -> str:
    if isinstance(value, Path):  # as the configuration file names it, not the runner's path
        inside = value.is_relative_to(workspace)
        return value.relative_to(workspace).as_posix() if inside else str(value)
    if value is None:
        return "(none)"
    if value is False:
        return "off"
    if value is True:
        return "on"
    if hasattr(value, "describe"):  # a threshold: "≥ 0.7"
        return str(value.describe())
    if hasattr(value, "model_dump"):
        value = value.model_dump(exclude_defaults=True)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_show(v, workspace) for v in value) + "]"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def _default(field: Any, value: Any) -> Any:
    """What a key is when the base commit has no table for it: the declared default; a key
    without one (a service's `url`) keeps the pull request's value, which then receives
    nothing the base commit withholds or names."""
    if field.default is not PydanticUndefined:
        return field.default
    if field.default_factory is not None:
        return field.default_factory()
    return value
