"""``--param NAME=SPEC`` → the grid of hybrid settings ``tune`` searches.

A spec is either a range ``START:STOP:STEP`` (both ends included, e.g.
``alpha=0:1:0.1`` is 11 values) or a list ``A,B,C`` (``fusion=rrf,convex``). The
grid is every combination; combinations that fuse identically (``alpha`` under
``fusion = "rrf"``, which ignores it) are kept once. Each point is validated as a
``[retrievers.hybrid]`` table would be, so a grid cannot hold a setting the
configuration file would refuse.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence

from pydantic import ValidationError

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import HybridConfig

# name → type of its values; `weights.<side>` sets one side's weight.
PARAMS: dict[str, type] = {
    "fusion": str,
    "normalisation": str,
    "alpha": float,
    "rrf_k": int,
    "depth": int,
    "weights.dense": float,
    "weights.bm25": float,
}
MAX_POINTS = 10_000


def parse_param(text: str) -> tuple[str, tuple[object, ...]]:
    """``alpha=0:1:0.25`` → ``("alpha", (0.0, 0.25, 0.5, 0.75, 1.0))``."""
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or name not in PARAMS:
        raise ConfigError(
            f"--param {text!r}: expected NAME=VALUES with NAME one of {', '.join(PARAMS)}"
        )
    kind = PARAMS[name]
    spec = spec.strip()
    if ":" in spec:
        if kind is str:
            raise ConfigError(f"--param {text!r}: {name} takes a list (A,B), not a range")
        values: tuple[object, ...] = _range(text, spec, kind)
    else:
        items = [item.strip() for item in spec.split(",")]
        if not spec or any(not item for item in items):
            raise ConfigError(f"--param {text!r}: empty value in the list")
        values = tuple(_convert(text, item, kind) for item in items)
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


def expand_grid(
    base: HybridConfig, params: Sequence[tuple[str, tuple[object, ...]]]
) -> list[HybridConfig]:
    """Every combination, validated, distinct in how it fuses, in grid order."""
    names = [name for name, _ in params]
    if len(set(names)) != len(names):
        raise ConfigError("a --param is given twice; list all its values in one --param")
    total = math.prod(len(values) for _, values in params)
    if total > MAX_POINTS:
        raise ConfigError(f"the grid has {total} points; at most {MAX_POINTS}")
    points: dict[str, HybridConfig] = {}
    for combination in itertools.product(*(values for _, values in params)):
        table = base.model_dump()
        weights = dict(table["weights"])
        for name, value in zip(names, combination, strict=True):
            if name.startswith("weights."):
                weights[name.removeprefix("weights.")] = value
            else:
                table[name] = value
        table["weights"] = weights
        try:
            config = HybridConfig.model_validate(table)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            shown = ", ".join(f"{n}={v}" for n, v in zip(names, combination, strict=True))
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"grid point {shown}: bad value for {where}: {message}") from None
        points.setdefault(json.dumps(config.fusion_settings(), sort_keys=True), config)
    return list(points.values())


def settings_label(config: HybridConfig) -> str:
    """``fusion=convex alpha=0.8 normalisation=theoretical-min depth=100``."""
    parts: list[str] = []
    for name, value in config.fusion_settings().items():
        if isinstance(value, dict):
            parts.extend(f"{name}.{side}={weight:g}" for side, weight in value.items())
        else:
            parts.append(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}")
    return " ".join(parts)


def toml_block(config: HybridConfig) -> str:
    """The ``[retrievers.hybrid]`` table that reproduces ``config``'s fusion."""
    lines = ["[retrievers.hybrid]"]
    for name, value in config.fusion_settings().items():
        if isinstance(value, dict):
            inner = ", ".join(f"{side} = {weight:g}" for side, weight in value.items())
            lines.append(f"{name} = {{ {inner} }}")
        elif isinstance(value, str):
            lines.append(f'{name} = "{value}"')
        elif isinstance(value, float):
            lines.append(f"{name} = {value:g}")
        else:
            lines.append(f"{name} = {value}")
    return "\n".join(lines) + "\n"
