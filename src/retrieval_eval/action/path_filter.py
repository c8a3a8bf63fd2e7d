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

Matching runs in time linear in the path's length: a file name is chosen by the
pull request (GitHub lists up to 3,000 of them, each up to 4,096 characters), and a
backtracking matcher (a regular expression, as glob libraries compile to) takes
time quadratic in it for a pattern with two ``**``. Each pattern is compiled to a
small automaton (``_Automaton``), which reads the path once, one character at a
time, following every way the pattern could still match at once; the sets of
positions it meets are cached as they arise, so a character costs one lookup.
A ``[...]`` class is translated by wcmatch, so it means what it always meant.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from wcmatch import fnmatch

# Sets of automaton positions remembered per pattern; past this, the cache starts over
# (a pattern's distinct sets are few; this only bounds a pathological one).
_CACHE_LIMIT = 50_000

Predicate = Callable[[str], bool]


def _any(char: str) -> bool:
    return True


def _not_slash(char: str) -> bool:
    return char != "/"


def _literal(expected: str) -> Predicate:
    return expected.__eq__


@cache
def _class(text: str) -> Predicate:
    """A ``[...]`` class as wcmatch reads it; it never matches a folder separator."""
    [regex], _ = fnmatch.translate(text, flags=fnmatch.DOTMATCH)
    compiled = re.compile(regex)
    return lambda char: char != "/" and compiled.match(char) is not None


def _atoms(pattern: str) -> list[str]:
    """Split into tokens: ``**``, ``*``, ``/``, a ``[...]`` class, an escape, a char."""
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
        else:
            atoms.append(char)
            i += 1
    return atoms


class _Automaton:
    """A nondeterministic automaton over the path's characters, built from one pattern.

    Node 0 is the start; ``edges[n]`` are (predicate, next node) pairs, ``skips[n]`` the
    nodes reachable from ``n`` without reading a character.
    """

    def __init__(self) -> None:
        self.edges: list[list[tuple[Predicate, int]]] = [[]]
        self.skips: list[list[int]] = [[]]
        self.end = 0

    def _node(self) -> int:
        self.edges.append([])
        self.skips.append([])
        return len(self.edges) - 1

    def one(self, predicate: Predicate) -> None:
        node = self._node()
        self.edges[self.end].append((predicate, node))
        self.end = node

    def optional(self, predicate: Predicate) -> None:
        node = self._node()
        self.edges[self.end].append((predicate, node))
        self.skips[self.end].append(node)
        self.end = node

    def repeated(self, predicate: Predicate) -> None:
        """Zero or more characters that each satisfy ``predicate``."""
        node = self._node()
        self.skips[self.end].append(node)
        self.edges[node].append((predicate, node))
        self.end = node

    def folders(self) -> None:
        """``(.*/)?``: nothing, or any text that ends with a folder separator."""
        inside, after = self._node(), self._node()
        self.skips[self.end] += [inside, after]
        self.edges[inside] += [(_any, inside), (_literal("/"), after)]
        self.end = after


def _compile(pattern: str) -> _Automaton:
    """GitHub's pattern as an automaton. ``*`` is any text within a folder, ``**`` as a
    whole segment is any number of folders (``a/**/b`` matches ``a/b``), and ``**``
    inside a segment (``**.js``) is any text at all; ``c?`` and ``c+`` quantify one
    character or class (a ``?`` or ``+`` with nothing to quantify is literal)."""
    automaton = _Automaton()
    atoms = _atoms(pattern)
    index = 0
    at_segment_start = True
    while index < len(atoms):
        atom = atoms[index]
        following = atoms[index + 1] if index + 1 < len(atoms) else None
        index += 1
        if atom == "**" and at_segment_start and following == "/":
            automaton.folders()  # the separator after it is part of the folders
            index += 1
            continue
        at_segment_start = atom == "/"
        if atom == "**":
            automaton.repeated(_any)
        elif atom == "*":
            automaton.repeated(_not_slash)
        elif atom == "/":
            automaton.one(_literal("/"))
        else:
            predicate = _predicate(atom)
            if following == "?":
                automaton.optional(predicate)
                index += 1
            elif following == "+":
                automaton.one(predicate)
                automaton.repeated(predicate)
                index += 1
            else:
                automaton.one(predicate)
    return automaton


def _predicate(atom: str) -> Predicate:
    if len(atom) == 2 and atom[0] == "\\":
        return _literal(atom[1])
    if atom.startswith("[") and len(atom) > 2:
        return _class(atom)
    return _literal(atom)


@dataclass
class _Matcher:
    automaton: _Automaton
    steps: dict[tuple[frozenset[int], str], frozenset[int]]
    start: frozenset[int]

    def matches(self, path: str) -> bool:
        states = self.start
        steps = self.steps
        for char in path:
            key = (states, char)
            following = steps.get(key)
            if following is None:
                if len(steps) > _CACHE_LIMIT:
                    steps.clear()
                following = steps[key] = self._step(states, char)
            if not following:
                return False
            states = following
        return self.automaton.end in states

    def _step(self, states: frozenset[int], char: str) -> frozenset[int]:
        edges = self.automaton.edges
        return self._closure(
            target for node in states for predicate, target in edges[node] if predicate(char)
        )

    def _closure(self, nodes: Iterable[int]) -> frozenset[int]:
        skips = self.automaton.skips
        seen = set(nodes)
        pending = list(seen)
        while pending:
            for target in skips[pending.pop()]:
                if target not in seen:
                    seen.add(target)
                    pending.append(target)
        return frozenset(seen)


@cache
def _matcher(pattern: str) -> _Matcher:
    # A path never holds "//": repeated separators in a pattern mean one, as in wcmatch.
    automaton = _compile(re.sub(r"/{2,}", "/", pattern))
    matcher = _Matcher(automaton, {}, frozenset())
    matcher.start = matcher._closure([0])
    return matcher


def glob_matches(pattern: str, path: str) -> bool:
    """Whether one GitHub filter pattern (without a leading ``!``) matches ``path``."""
    return _matcher(pattern).matches(path)


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
