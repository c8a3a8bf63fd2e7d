"""The command-line flags of the settings, made from the option table.

Each declared flag becomes a click option whose help is the setting's line of
documentation and its default; a flag the user did not give is no override, so the
configuration file's value stands. Nested settings (``judge.max_cost_usd``) become nested
overrides, laid over the file's table key by key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

import click
from pydantic import BaseModel

from retrieval_eval.config.markdown import shown_default
from retrieval_eval.config.table import Row, command_rows
from retrieval_eval.settings import RunSettings


def config_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--config``: the file the settings are read from (not a setting itself)."""
    return click.option(
        "--config",
        "config_file",
        type=click.Path(path_type=Path),
        help="Config file. Default: "
        "retrieval-eval.toml, else [tool.retrieval-eval] in pyproject.toml.",
    )(command)


class SettingFlag(click.Option):
    """A flag made from the option table; ``row``: the setting it overrides."""

    def __init__(self, *args: Any, row: Row, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.row = row


def settings_flags(
    command: str,
    model: type[BaseModel] = RunSettings,
    *,
    named: Mapping[str, str] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding one click option per setting the table declares a flag of
    ``command`` for (its name as typed: ``baseline update``). ``named``: a command's own
    name for a setting's flag (`generate --out` sets ``datasets``); its help, type and
    default are still the table's, and it overrides the same setting."""

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        for row in reversed(command_rows(command, model)):
            function = _option(row, (named or {}).get(row.key))(function)
        return function

    return decorate


def _option(
    row: Row, name: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    assert row.flag is not None
    flag = name or row.flag
    base = _plain(row.type)
    help_text = f"{row.doc} Default: {_help_default(row)}."
    if base is bool:
        return click.option(
            flag,
            row.parameter,
            cls=SettingFlag,
            row=row,
            is_flag=True,
            default=None,
            help=help_text,
        )
    kind: Any = click.Path(path_type=Path) if base is Path else base
    return click.option(
        flag,
        row.parameter,
        cls=SettingFlag,
        row=row,
        type=kind,
        envvar=row.env,
        show_envvar=row.env is not None,
        help=help_text,
    )


def _help_default(row: Row) -> str:
    key = row.key.rsplit(".", 1)
    table = f"[{key[0]}] {key[1]}" if len(key) == 2 else row.key
    return f"{table} in the config file, else {shown_default(row.default).strip('`')}"


def _plain(annotation: Any) -> Any:
    """``Path | None`` -> ``Path``."""
    if get_origin(annotation) in (Union, UnionType):
        inner = [a for a in get_args(annotation) if a is not NoneType]
        return inner[0] if len(inner) == 1 else str
    return annotation


def overrides_from_flags(flags: Mapping[str, Any]) -> dict[str, Any]:
    """The settings the user gave flags for, nested as the configuration file nests them
    (the running command's settings flags: a flag of its own is never taken for one)."""
    return nested({row.key: flags.get(row.parameter) for row in _given_rows()})


def _given_rows() -> tuple[Row, ...]:
    """The settings the running command has flags for."""
    params = click.get_current_context().command.params
    return tuple(param.row for param in params if isinstance(param, SettingFlag))


def nested(values: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted keys with a value (``None``: not given) as the file's nested tables."""
    overrides: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        *tables, leaf = key.split(".")
        target = overrides
        for table in tables:
            target = target.setdefault(table, {})
        target[leaf] = value
    return overrides


def typed_paths(flags: Mapping[str, Any], *kinds: str) -> tuple[Path, ...]:
    """The paths typed on the command line for settings that name a file of ``kinds``."""
    return tuple(
        Path(flags[row.parameter])
        for row in _given_rows()
        if row.path in kinds and flags.get(row.parameter)
    )
