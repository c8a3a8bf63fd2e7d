"""Every setting, one row each, read from the declarations on ``RunSettings``.

A setting with no declaration, or a key inside a table with none, is the base commit's:
a name forgotten is held to the base, never handed to the pull request. Inside the tables
a pull request proposes (the retrievers, the challengers) a key that is a resource bound
(a time, a size, a price, a budget, a retry count, a folder written, or an address or
variable a secret is sent to or read from) is the base commit's too, by its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from retrieval_eval.settings import Commit, Option, RunSettings, declared

# The keys of a retriever table that bound what the pull request's code may spend or reach.
# A new engine's `timeout_s`, `max_answer_bytes` or `url` is a bound without a declaration.
BOUND_NAME = re.compile(
    r"(^|_)(timeout|url|env|usd|cost|budget|size|bytes|chars|retries|concurrency|backoff|"
    r"threads|workers|queries|dir|limit|max|uri|host|endpoint|port)(_|$)|_s$"
)
# Under-test tables whose keys a bound rule applies to (the retriever tables).
_RETRIEVER_TABLES = ("retrievers",)


@dataclass(frozen=True)
class Row:
    """One setting as every table shows it."""

    key: str  # dotted: `judge.max_cost_usd`
    type: Any
    default: Any
    doc: str
    commit: Commit
    flag: str | None  # `--tolerance`: the flag of ``commands`` (None: it has none)
    action_input: str | None  # `tolerance`
    path: str | None
    env: str | None
    action_doc: str
    constraints: tuple[Any, ...] = ()  # the field's bounds (`ge=0.0`), as pydantic holds them
    long_doc: str = ""  # the table of keys' text (``doc`` unless the declaration says more)
    commands: tuple[str, ...] = ()  # the commands that take ``flag`` (`baseline update`)

    @property
    def sources(self) -> tuple[str, ...]:
        """Where it may come from, besides the configuration file."""
        return tuple(
            source
            for source, given in (
                ("flag", self.flag),
                ("Action input", self.action_input),
                ("environment", self.env),
            )
            if given
        )

    @property
    def parameter(self) -> str:
        """The flag's parameter name in a command's keyword arguments."""
        return self.key.replace(".", "__")


def rows(model: type[BaseModel] = RunSettings) -> tuple[Row, ...]:
    """The declared settings of ``model`` and its declared tables' own declared keys."""
    found: list[Row] = []
    for name, field in model.model_fields.items():
        option = declared(field)
        if option is None:
            continue
        found.append(_row(name, field, option))
        inner = _model_of(field.annotation)
        if inner is not None and option.commit is not Commit.PULL_REQUEST:
            for sub, sub_field in inner.model_fields.items():
                sub_option = declared(sub_field)
                if sub_option is not None:
                    found.append(_row(f"{name}.{sub}", sub_field, _inherit(sub_option, option)))
    return tuple(found)


def command_rows(command: str, model: type[BaseModel] = RunSettings) -> tuple[Row, ...]:
    """The settings ``command`` takes a flag for (its name as typed: ``import queries``),
    in the table's order: every command's list of settings flags is this."""
    return tuple(row for row in rows(model) if command in row.commands)


def _inherit(option: Option, parent: Option) -> Option:
    """A key of a table is read from its table's commit unless it declares its own."""
    if option.commit is Commit.BASE and parent.commit is not Commit.BASE:
        return replace(option, commit=parent.commit)
    return option


def _row(key: str, field: Any, option: Option) -> Row:
    leaf = key.rsplit(".", 1)[-1]
    if option.flag is not None and not option.commands:
        raise ValueError(f"`{key}` names a flag but no command that takes it")
    flag = (option.flag or "--" + leaf.replace("_", "-")) if option.commands else None
    action_input = option.action_input if isinstance(option.action_input, str) else None
    if option.action_input is True:
        action_input = leaf.replace("_", "-")
    default = field.default
    if default is PydanticUndefined and field.default_factory is not None:
        default = field.default_factory()
    return Row(
        key=key,
        type=field.annotation,
        default=default,
        doc=option.doc,
        commit=option.commit,
        flag=flag,
        action_input=action_input,
        path=option.path,
        env=option.env,
        action_doc=option.action_doc,
        constraints=tuple(m for m in field.metadata if not isinstance(m, Option)),
        long_doc=option.long_doc or option.doc,
        commands=option.commands,
    )


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def commit_of(path: tuple[str, ...], model: type[BaseModel] = RunSettings) -> Commit:
    """Which commit the key at ``path`` is read from (the steps name fields and, inside
    ``challengers``, the challenger's name)."""
    field = model.model_fields.get(path[0])
    option = declared(field) if field is not None else None
    commit = option.commit if option is not None else Commit.BASE
    if commit is not Commit.PULL_REQUEST or len(path) == 1:
        return commit
    if path[0] == "challengers":  # challengers.NAME.retrievers.TABLE.KEY
        inside = path[3:] if len(path) > 3 and path[2] == "retrievers" else ()
        return retriever_key_commit(inside)
    if path[0] in _RETRIEVER_TABLES:
        return retriever_key_commit(path[1:])
    return commit


def retriever_key_commit(path: tuple[str, ...]) -> Commit:
    """A key inside the retriever tables (``hybrid.claude.timeout_s``): the pull request's,
    unless it names a resource bound."""
    if any(BOUND_NAME.search(step) for step in path):
        return Commit.BASE
    return Commit.PULL_REQUEST


def retriever_bounds(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[str]:
    """Every bound key of the retriever tables, dotted (for the documentation)."""
    found: list[str] = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        path = (*prefix, key)
        inner = _table_model(field.annotation)
        if BOUND_NAME.search(name):
            found.append(".".join(path))
        elif inner is not None:
            found.extend(retriever_bounds(inner, path))
    return found


def _table_model(annotation: Any) -> type[BaseModel] | None:
    direct = _model_of(annotation)
    if direct is not None:
        return direct
    if get_origin(annotation) is not None:
        for argument in get_args(annotation):
            inner = _model_of(argument)
            if inner is not None:
                return inner
    return None
