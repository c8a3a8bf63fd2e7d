"""``--param NAME=SPEC`` → the grid of retriever settings ``tune`` searches.

``tune`` searches one retriever's table: ``hybrid``'s fusion, or ``bm25``'s and
``dense``'s indexing settings (``TUNABLE`` names what each takes). A spec is either
a range ``START:STOP:STEP`` (both ends included, e.g. ``alpha=0:1:0.1`` is 11
values) or a list ``A,B,C`` (``fusion=rrf,convex``; ``stemming=true,false``;
``stopwords=lucene,en-179,none``). The grid is every combination; combinations
that rank identically (``alpha`` under ``fusion = "rrf"``, which ignores it) are
kept once. Each point is validated as the ``[retrievers.NAME]`` table would be, so
a grid cannot hold a setting the configuration file would refuse.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import Bm25Config, DenseConfig, HybridConfig

# retriever → parameter name → type of its values; `weights.<side>` sets one side's weight.
TUNABLE: dict[str, dict[str, type]] = {
    "hybrid": {
        "fusion": str,
        "normalisation": str,
        "alpha": float,
        "rrf_k": int,
        "depth": int,
        "weights.dense": float,
        "weights.bm25": float,
    },
    "bm25": {
        "k1": float,
        "b": float,
        "stopwords": str,
        "stemming": bool,
        "chunk_tokens": int,
        "chunk_overlap": int,
    },
    "dense": {"chunk_tokens": int, "chunk_overlap": int},
}
TUNED_RETRIEVERS = tuple(TUNABLE)
PARAMS = TUNABLE["hybrid"]
MAX_POINTS = 10_000
# `stopwords=none` is the table's `stopwords = false`.
_STOPWORDS_OFF = "none"


def parse_param(text: str, retriever: str = "hybrid") -> tuple[str, tuple[object, ...]]:
    """``alpha=0:1:0.25`` → ``("alpha", (0.0, 0.25, 0.5, 0.75, 1.0))``."""
    params = TUNABLE[retriever]
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or name not in params:
        raise ConfigError(
            f"--param {text!r}: expected NAME=VALUES with NAME one of {', '.join(params)} "
            f"(the {retriever} retriever's settings)"
        )
    kind = params[name]
    spec = spec.strip()
    if ":" in spec:
        if kind is str or kind is bool:
            raise ConfigError(f"--param {text!r}: {name} takes a list (A,B), not a range")
        values: tuple[object, ...] = _range(text, spec, kind)
    else:
        items = [item.strip() for item in spec.split(",")]
        if not spec or any(not item for item in items):
            raise ConfigError(f"--param {text!r}: empty value in the list")
        values = tuple(_convert(text, item, kind) for item in items)
    if name == "stopwords":
        values = tuple(False if value == _STOPWORDS_OFF else value for value in values)
    return name, tuple(dict.fromkeys(values))  # a value listed twice is searched once


def _range(text: str, spec: str, kind: type) -> tuple[object, ...]:
    parts = spec.split(":")
    if len(parts) != 3:
        raise ConfigError(f"--param {text!r}: a range is START:STOP:STEP")
    start, stop, step = (_number(text, part.strip()) for part in parts)
    if step <= 0 or stop < start:
        raise ConfigError(f"--param {text!r}: a range needs STEP > 0 and STOP >= START")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_POINTS:
        raise ConfigError(f"--param {text!r}: {count} values; at most {MAX_POINTS}")
    # Rounded so 0.1 steps give 0.3, not 0.30000000000000004, in the printed settings.
    values = [round(start + i * step, 10) for i in range(count)]
    if kind is int:
        if any(value != int(value) for value in values):
            raise ConfigError(f"--param {text!r}: takes whole numbers")
        return tuple(int(value) for value in values)
    return tuple(values)


def _convert(text: str, item: str, kind: type) -> object:
    if kind is bool:
        if item.lower() not in ("true", "false"):
            raise ConfigError(f"--param {text!r}: {item!r} is not true or false")
        return item.lower() == "true"
    if kind is str:
        return item
    number = _number(text, item)
    if kind is int:
        if number != int(number):
            raise ConfigError(f"--param {text!r}: {item!r} is not a whole number")
        return int(number)
    return number


def _number(text: str, item: str) -> float:
    try:
        number = float(item)
    except ValueError:
        raise ConfigError(f"--param {text!r}: {item!r} is not a number") from None
    if not math.isfinite(number):
        raise ConfigError(f"--param {text!r}: {item!r} is not a finite number")
    return number


def expand_grid(base: BaseModel, params: Sequence[tuple[str, tuple[object, ...]]]) -> list[Any]:
    """Every combination, validated, distinct in how it ranks, in grid order. ``base``
    is the retriever's table (``HybridConfig``, ``Bm25Config`` or ``DenseConfig``)."""
    names = [name for name, _ in params]
    if len(set(names)) != len(names):
        raise ConfigError("a --param is given twice; list all its values in one --param")
    total = math.prod(len(values) for _, values in params)
    if total > MAX_POINTS:
        raise ConfigError(f"the grid has {total} points; at most {MAX_POINTS}")
    model = type(base)
    points: dict[str, Any] = {}
    for combination in itertools.product(*(values for _, values in params)):
        table = base.model_dump()
        weights = dict(table.get("weights", {}))
        for name, value in zip(names, combination, strict=True):
            if name.startswith("weights."):
                weights[name.removeprefix("weights.")] = value
            else:
                table[name] = value
        if "weights" in table:
            table["weights"] = weights
        try:
            config = model.model_validate(table)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            shown = ", ".join(f"{n}={v}" for n, v in zip(names, combination, strict=True))
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"grid point {shown}: bad value for {where}: {message}") from None
        points.setdefault(json.dumps(tuned_settings(config), sort_keys=True), config)
    return list(points.values())


def tuned_settings(config: BaseModel) -> dict[str, object]:
    """The settings of ``config`` that shape its ranking and that ``tune`` can search."""
    if isinstance(config, HybridConfig):
        return config.fusion_settings()
    if isinstance(config, Bm25Config):
        names = TUNABLE["bm25"]
    elif isinstance(config, DenseConfig):
        names = TUNABLE["dense"]
    else:  # pragma: no cover - TUNABLE names every model tune is given
        raise TypeError(type(config).__name__)
    return {name: getattr(config, name) for name in names}


def settings_label(config: BaseModel) -> str:
    """``fusion=convex alpha=0.8 normalisation=theoretical-min depth=100``."""
    parts: list[str] = []
    for name, value in tuned_settings(config).items():
        if isinstance(value, dict):
            parts.extend(f"{name}.{side}={weight:g}" for side, weight in value.items())
        elif isinstance(value, bool):
            shown = (_STOPWORDS_OFF if name == "stopwords" else "false") if not value else "true"
            parts.append(f"{name}={shown}")
        else:
            parts.append(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}")
    return " ".join(parts)


def toml_block(config: BaseModel, retriever: str = "hybrid") -> str:
    """The ``[retrievers.NAME]`` table that reproduces ``config``'s tuned settings."""
    lines = [f"[retrievers.{retriever}]"]
    for name, value in tuned_settings(config).items():
        if isinstance(value, dict):
            inner = ", ".join(f"{side} = {weight:g}" for side, weight in value.items())
            lines.append(f"{name} = {{ {inner} }}")
        elif isinstance(value, bool):
            lines.append(f"{name} = {'true' if value else 'false'}")
        elif isinstance(value, str):
            lines.append(f'{name} = "{value}"')
        elif isinstance(value, float):
            lines.append(f"{name} = {value:g}")
        else:
            lines.append(f"{name} = {value}")
    return "\n".join(lines) + "\n"
