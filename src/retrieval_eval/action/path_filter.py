"""The ``paths`` input: which changed files make an evaluation worth running.

Users copy their workflow's ``on.pull_request.paths`` list into this input, so
it means exactly what GitHub's filter patterns mean (the "Filter pattern cheat
sheet" in GitHub's workflow syntax reference):

- a pattern matches the whole path from the repository root; a bare folder
  name (``docs``) matches only a file of that name, never what is inside it;
- ``*`` matches within one folder, ``**`` matches across folders (also inside
  a segment: ``**.js`` is every ``.js`` file), ``[a-z]`` is one character;
- ``?`` and ``+`` are quantifiers on the preceding character, as in a regular
  expression (``*.jsx?`` matches ``page.js`` and ``page.jsx``);
- a line starting with ``!`` excludes, lines are checked in order and the last
  matching line decides, so a later line re-includes (a set of only ``!``
  lines starts from "everything"); dots are ordinary characters.

Matching is wcmatch's (globstar, extglob, dotglob). The few lines of
``_to_wcmatch`` only spell GitHub's non-glob syntax in wcmatch's: the ``?`` and
``+`` quantifiers become the extglob groups ``?(c)`` and ``+(c)``, and a ``**``
inside a segment becomes the two globstar patterns it stands for. wcmatch's own
negation is not used: it cannot re-include a path that a ``!`` line excluded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from wcmatch import glob

_FLAGS = glob.GLOBSTAR | glob.EXTGLOB | glob.DOTGLOB
# Characters that mean something to wcmatch (extglob groups) but are literal in GitHub's patterns.
_LITERAL_FOR_GITHUB = set("()|{}@!")


def _atoms(pattern: str) -> list[str]:
    """Split into wcmatch tokens: ``**``, ``*``, ``/``, a ``[...]`` class, an escape, a char."""
    atoms: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            atoms.append("**")
            i += 2
            while i < len(pattern) and pattern[i] == "*":
                i += 1  # `***` is `**`
        elif char == "\\" and i + 1 < len(pattern):
            atoms.append(pattern[i : i + 2])
            i += 2
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            atoms.append(pattern[i : end + 1])
            i = end + 1
        elif char in _LITERAL_FOR_GITHUB:
            atoms.append("\\" + char)
            i += 1
        else:
            atoms.append(char)
            i += 1
    return atoms


def _quantified(atoms: list[str]) -> list[str]:
    """GitHub's ``c?`` (zero or one c) and ``c+`` (one or more) as extglob groups."""
    out: list[str] = []
    repeatable = False  # whether the last token is one character (or class) to quantify
    for atom in atoms:
        if atom in {"?", "+"} and repeatable:
            out[-1] = f"{atom}({out[-1]})"
            repeatable = False
        elif atom in {"?", "+"}:
            out.append("\\" + atom)  # nothing to repeat: a literal character
            repeatable = True
        else:
            out.append(atom)
            repeatable = atom not in {"*", "**", "/"}
    return out


def _segments(atoms: list[str]) -> list[list[str]]:
    segments: list[list[str]] = [[]]
    for atom in atoms:
        if atom == "/":
            segments.append([])
        else:
            segments[-1].append(atom)
    return segments


def _expand(segment: list[str]) -> list[str]:
    """A segment as wcmatch path parts: ``a**b`` is ``a*b`` or ``a*/**/*b`` (folders between)."""
    if "**" not in segment or segment == ["**"]:
        return ["".join(segment)]
    at = segment.index("**")
    head, tail = "".join(segment[:at]), segment[at + 1 :]
    return [
        variant for rest in _expand(tail) for variant in (f"{head}*{rest}", f"{head}*/**/*{rest}")
    ]


@cache
def _to_wcmatch(pattern: str) -> tuple[str, ...]:
    """The wcmatch patterns that together mean what GitHub's ``pattern`` means."""
    variants = [""]
    for index, segment in enumerate(_segments(_quantified(_atoms(pattern)))):
        separator = "/" if index else ""
        variants = [f"{v}{separator}{part}" for v in variants for part in _expand(segment)]
    return tuple(variants)


def glob_matches(pattern: str, path: str) -> bool:
    """Whether one GitHub filter pattern (without a leading ``!``) matches ``path``."""
    return glob.globmatch(path, list(_to_wcmatch(pattern)), flags=_FLAGS)


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
            # A path never starts with "/": a leading one can only mean the repository root.
            if glob_matches(pattern.removeprefix("!").lstrip("/"), path):
                included = not excluding
        return included

    def matching(self, paths: Iterable[str]) -> list[str]:
        return [path for path in paths if self.matches(path)]

    def describe(self) -> str:
        return ", ".join(self.patterns)
