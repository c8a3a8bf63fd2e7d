"""The JSONPath subset that maps a search service's answer onto hits.

``$.data.results``, ``data.results``, ``results[0].hits`` and ``doc.id`` are
accepted: object keys separated by dots, list positions in brackets, an
optional leading ``$``. Filters and wildcards are not: one answer shape per
service is all the mapping needs, and a full JSONPath library would add a
dependency for nothing.
"""

from __future__ import annotations

import re

Step = str | int

_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


class PathError(ValueError):
    pass


def parse_path(path: str) -> tuple[Step, ...]:
    """Steps of ``path``; ``$`` alone (the whole answer) is the empty path."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[Step] = []
    position = 0
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None or match.end() == position:
            raise PathError(
                f"{path!r} is not a path like 'data.results' or '$.results[0].hits' "
                f"(stuck at {text[position:]!r})"
            )
        key, index = match.groups()
        steps.append(int(index) if index is not None else key)
        position = match.end()
    if not steps and path.strip() not in ("$", ""):
        raise PathError(f"{path!r} is not a path")
    if not steps and not path.strip():
        raise PathError("a path cannot be empty (use '$' for the whole answer)")
    return tuple(steps)


_MISSING = object()


def follow(value: object, steps: tuple[Step, ...]) -> object:
    """The value at ``steps``, or :data:`MISSING` when the answer has no such place."""
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return _MISSING
            value = value[step]
        else:
            if not isinstance(value, dict) or step not in value:
                return _MISSING
            value = value[step]
    return value


MISSING = _MISSING
