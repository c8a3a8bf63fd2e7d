"""The documentation's tables of settings, written from the option table.

docs/configuration.md and the README hold them between markers; a test compares each
with what these functions write, so a new setting shows up in both by its declaration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_origin

from pydantic import BaseModel

from retrieval_eval.config.table import Row, retriever_bounds, rows
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.settings import RunSettings

# The markers each generated table sits between.
ORIGIN_MARKERS = ("<!-- settings-origin:start -->", "<!-- settings-origin:end -->")
KEY_MARKERS = ("<!-- settings-keys:start -->", "<!-- settings-keys:end -->")


def key_table(model: type[BaseModel] = RunSettings) -> str:
    """docs/configuration.md's table of keys: one row per top-level setting, a table of
    entries (``[judge]``, ``[thresholds]``) named in brackets."""
    lines = ["| Key | Default | Meaning |", "|---|---|---|"]
    for row in rows(model):
        if "." in row.key:
            continue
        key = f"`[{row.key}]`" if _is_table(row.type) else f"`{row.key}`"
        lines.append(f"| {key} | {_default(row)} | {row.long_doc} |")
    return "\n".join(lines)


def _is_table(annotation: Any) -> bool:
    """A TOML table: a mapping or a settings model of its own."""
    origin = get_origin(annotation) or annotation
    return isinstance(origin, type) and (issubclass(origin, dict | BaseModel))


def origin_table(model: type[BaseModel] = RunSettings) -> str:
    """One row per setting: which commit a pull request's run reads it from, and what else
    may set it."""
    lines = [
        "| setting | read from | default | also set by | what it is |",
        "|---|---|---|---|---|",
    ]
    for row in rows(model):
        lines.append(
            f"| `{row.key}` | {row.commit.value} | {_default(row)} | {_sources(row)} | {row.doc} |"
        )
    bounds = ", ".join(f"`{key}`" for key in retriever_bounds(RetrieversConfig))
    lines.append("")
    lines.append(
        "Inside `[retrievers]` and each challenger's tables, these keys are resource bounds, "
        f"read from the base commit: {bounds}."
    )
    return "\n".join(lines)


def replace_between(text: str, markers: tuple[str, str], table: str) -> str:
    start, end = markers
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}\n{end}{tail}"


def between(text: str, markers: tuple[str, str]) -> str:
    return text.split(markers[0], 1)[1].split(markers[1], 1)[0].strip("\n")


def _default(row: Row) -> str:
    return shown_default(row.default)


def shown_default(value: Any) -> str:
    """A default as the tables show it."""
    if isinstance(value, BaseModel) or (isinstance(value, dict) and len(value) > 3):
        return "(table)"
    if isinstance(value, Path):
        return f"`{value.as_posix()}`"
    if value is None:
        return "not set"
    if isinstance(value, tuple):
        return "`[" + ", ".join(f'"{v}"' for v in value) + "]`"
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return ", ".join(f'`{key} = "{entry}"`' for key, entry in value.items())
    if isinstance(value, dict):
        return "(table)" if value else "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _sources(row: Row) -> str:
    given = []
    if row.flag:
        given.append(f"`{row.flag}`")
    if row.action_input:
        given.append(f"input `{row.action_input}`")
    if row.env:
        given.append(f"`{row.env}`")
    return ", ".join(given) or "—"
