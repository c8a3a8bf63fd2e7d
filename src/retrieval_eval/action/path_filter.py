"""The ``paths`` input: which changed files make an evaluation worth running.

Semantics follow GitHub's own workflow ``paths:`` filter, because that is what
users already know: ``*`` stays within one folder, ``**`` crosses folders,
``?`` is one character, ``[...]`` a class; a line starting with ``!`` excludes,
and the last matching line wins. A set of only ``!`` lines starts from
"everything". (Python 3.11's fnmatch lets ``*`` cross ``/`` and has no ``**``,
hence the small translator.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache


@cache
def _compile(glob: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")  # zero or more whole folders
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := glob.find("]", i + 2)) != -1:
            body = glob[i + 1 : end]
            negated = body.startswith("!")
            body = body[1:] if negated else body
            out.append(f"[{'^' if negated else ''}{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    # A folder pattern also covers what is inside it (`docs` matches `docs/a.md`).
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


@dataclass(frozen=True)
class PathFilter:
    patterns: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        return not self.patterns

    def matches(self, path: str) -> bool:
        included = all(p.startswith("!") for p in self.patterns)
        for pattern in self.patterns:
            excluding = pattern.startswith("!")
            if _compile(pattern.removeprefix("!").lstrip("/")).fullmatch(path):
                included = not excluding
        return included

    def matching(self, paths: Iterable[str]) -> list[str]:
        return [path for path in paths if self.matches(path)]

    def describe(self) -> str:
        return ", ".join(self.patterns)
