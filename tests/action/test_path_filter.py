"""`paths` means what GitHub's `on.pull_request.paths` means.

The table is every example of the "Patterns to match file paths" part of the
"Filter pattern cheat sheet" in GitHub's "Workflow syntax for GitHub Actions"
(docs.github.com, actions/reference/workflows-and-actions/workflow-syntax),
transcribed pattern by pattern with each listed match and non-match.
"""

from __future__ import annotations

import string
from functools import cache

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from wcmatch import glob

from retrieval_eval.action.path_filter import PathFilter, glob_matches
from tests.security.harness import Repo, repo

__all__ = ["repo"]  # the fixture

CHEAT_SHEET: list[tuple[tuple[str, ...], list[str], list[str]]] = [
    # (patterns, example matches, documented non-matches)
    (("*",), ["README.md", "server.rb"], []),
    (("*.jsx?",), ["page.js", "page.jsx"], []),
    (("**",), ["all/the/files.md"], []),
    (("*.js",), ["app.js", "index.js"], []),
    (("**.js",), ["index.js", "js/index.js", "src/js/app.js"], []),
    (("docs/*",), ["docs/README.md", "docs/file.txt"], []),
    (("docs/**",), ["docs/README.md", "docs/mona/octocat.txt"], []),
    (
        ("docs/**/*.md",),
        ["docs/README.md", "docs/mona/hello-world.md", "docs/a/markdown/file.md"],
        [],
    ),
    (("**/docs/**",), ["docs/hello.md", "dir/docs/my-file.txt", "space/docs/plan/space.doc"], []),
    (("**/README.md",), ["README.md", "js/README.md"], []),
    (("**/*src/**",), ["a/src/app.js", "my-src/code/js/app.js"], []),
    (("**/*-post.md",), ["my-post.md", "path/their-post.md"], []),
    (
        ("**/migrate-*.sql",),
        ["migrate-10909.sql", "db/migrate-v1.0.sql", "db/sept/migrate-v1.sql"],
        [],
    ),
    (("*.md", "!README.md"), ["hello.md"], ["README.md", "docs/hello.md"]),
    (("*.md", "!README.md", "README*"), ["hello.md", "README.md", "README.doc"], []),
]


@pytest.mark.parametrize(("patterns", "matches", "misses"), CHEAT_SHEET)
def test_every_cheat_sheet_example(
    patterns: tuple[str, ...], matches: list[str], misses: list[str]
) -> None:
    path_filter = PathFilter(patterns)
    for path in matches:
        assert path_filter.matches(path), f"{patterns} should match {path}"
    for path in misses:
        assert not path_filter.matches(path), f"{patterns} should not match {path}"


@pytest.mark.parametrize(
    ("patterns", "path", "expected"),
    [
        # What the descriptions in the cheat sheet rule out.
        (("*",), "docs/README.md", False),  # `*` does not match `/`
        (("*.js",), "js/index.js", False),  # only at the root
        (("*.jsx?",), "page.jsxx", False),
        (("docs/*",), "docs/mona/octocat.txt", False),  # the root of docs only
        (("docs/**",), "src/docs/a.md", False),  # patterns start from the root
        (("**/*src/**",), "src.js", False),
        # A bare folder name is a file name: it does not match what is inside the folder.
        (("docs",), "docs/README.md", False),
        (("docs",), "docs", True),
        (("datasets",), "datasets/keyword.jsonl", False),
        # `+`: one or more of the preceding character, as in GitHub's list of special characters.
        (("v[12].[0-9]+.md",), "v1.10.md", True),
        (("v[12].[0-9]+.md",), "v1..md", False),
        # Classes, exclusions, order.
        (("datasets/[ks]*.jsonl",), "datasets/semantic.jsonl", True),
        (("datasets/[!ks]*.jsonl",), "datasets/semantic.jsonl", False),
        (("datasets/**", "!datasets/**/*.txt"), "datasets/notes/readme.txt", False),
        (("datasets/**", "!datasets/**/*.txt"), "datasets/notes/a.md", True),
        (
            ("datasets/**", "!datasets/drafts/**", "datasets/drafts/keep.md"),
            "datasets/drafts/keep.md",
            True,
        ),
        (("!docs/**",), "src/app.py", True),  # only exclusions: everything else counts
        (("!docs/**",), "docs/a.md", False),
        # Dots are ordinary characters (GitHub matches `.github/**` with `**`).
        (("**",), ".github/workflows/ci.yml", True),
        (("*.yml",), ".pre-commit.yml", True),
        # Characters with no meaning in GitHub's patterns are literal.
        (("notes (old)/*.md",), "notes (old)/a.md", True),
        (("a|b.md",), "a|b.md", True),
        (("{a,b}.md",), "a.md", False),
        (("/baseline.json",), "baseline.json", True),  # a path never starts with "/"
    ],
)
def test_glob_semantics(patterns: tuple[str, ...], path: str, expected: bool) -> None:
    assert PathFilter(patterns).matches(path) is expected


def test_matching_keeps_the_order_given() -> None:
    path_filter = PathFilter(("datasets/**", "baseline.json"))
    assert path_filter.matching(["README.md", "datasets/k.jsonl", "baseline.json"]) == [
        "datasets/k.jsonl",
        "baseline.json",
    ]
    assert path_filter.describe() == "datasets/**, baseline.json"


_NAME = st.text(
    alphabet=string.ascii_letters + string.digits + "-_. ", min_size=1, max_size=12
).filter(
    lambda name: name not in {".", ".."}  # git never lists such a segment in a path
)
_PATH = st.lists(_NAME, min_size=1, max_size=5).map("/".join)


@given(folder=_PATH, rest=_PATH)
def test_a_folder_pattern_matches_what_github_does(folder: str, rest: str) -> None:
    """Plain names are literal; `folder/**` takes everything under it; `folder` takes none of it."""
    inside = f"{folder}/{rest}"
    assert PathFilter((folder,)).matches(folder)
    assert not PathFilter((folder,)).matches(inside)
    assert PathFilter((f"{folder}/**",)).matches(inside)
    assert PathFilter(("**",)).matches(inside)
    assert not PathFilter((f"{folder}/**", f"!{folder}/**")).matches(inside)


# The matcher before it was made linear (it compiled each pattern to wcmatch's globs, whose
# regular expressions backtrack): the reference the linear one must agree with.
_FLAGS = glob.GLOBSTAR | glob.EXTGLOB | glob.DOTGLOB
# Characters that mean something to wcmatch (extglob groups) but are literal in GitHub's patterns.
_LITERAL_FOR_GITHUB = set("()|{}@!")


def _old_atoms(pattern: str) -> list[str]:
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


def _old_quantified(atoms: list[str]) -> list[str]:
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


def _old_segments(atoms: list[str]) -> list[list[str]]:
    segments: list[list[str]] = [[]]
    for atom in atoms:
        if atom == "/":
            segments.append([])
        else:
            segments[-1].append(atom)
    return segments


def _old_expand(segment: list[str]) -> list[str]:
    """A segment as wcmatch path parts: ``a**b`` is ``a*b`` or ``a*/**/*b`` (folders between)."""
    if "**" not in segment or segment == ["**"]:
        return ["".join(segment)]
    at = segment.index("**")
    head, tail = "".join(segment[:at]), segment[at + 1 :]
    return [
        variant
        for rest in _old_expand(tail)
        for variant in (f"{head}*{rest}", f"{head}*/**/*{rest}")
    ]


@cache
def _old_to_wcmatch(pattern: str) -> tuple[str, ...]:
    """The wcmatch patterns that together mean what GitHub's ``pattern`` means."""
    variants = [""]
    for index, segment in enumerate(_old_segments(_old_quantified(_old_atoms(pattern)))):
        separator = "/" if index else ""
        variants = [f"{v}{separator}{part}" for v in variants for part in _old_expand(segment)]
    return tuple(variants)


def _wcmatch_glob_matches(pattern: str, path: str) -> bool:
    """The matcher before it was made linear: GitHub's pattern spelled in wcmatch's syntax."""
    return glob.globmatch(path, list(_old_to_wcmatch(pattern)), flags=_FLAGS)


_PATTERN_ATOMS = st.sampled_from(
    ["a", "b", ".", "-", "*", "**", "/", "?", "+", "[ab]", "[!a]", "[a-c]", "\\.", "(", "|", "!"]
)
_PATTERN = st.lists(_PATTERN_ATOMS, min_size=1, max_size=10).map("".join)
_SEGMENT = st.text(alphabet="ab.-?+(", min_size=1, max_size=5).filter(
    lambda name: name not in {".", ".."}
)
_ORDINARY_PATH = st.lists(_SEGMENT, min_size=1, max_size=5).map("/".join)


@st.composite
def _pattern_and_a_path_near_it(draw: st.DrawFn) -> tuple[str, str]:
    """A path, and a pattern made from it by turning stretches into wildcards, so that about
    half the pairs match; then either may be changed a little."""
    path = draw(_ORDINARY_PATH)
    pattern, i = "", 0
    while i < len(path):
        choice = draw(st.sampled_from(["keep", "keep", "*", "**", "?", "+", "[ab]", "[!a]"]))
        skip = draw(st.integers(min_value=0, max_value=4))
        if choice == "*":
            pattern, i = pattern + "*", i + len(path[i : i + skip].split("/")[0])
        elif choice == "**":
            pattern, i = pattern + "**", i + skip
        elif choice in {"?", "+"} and path[i] not in "?+/":
            pattern, i = pattern + path[i] + choice, i + 1
        elif choice.startswith("[") and path[i] in "ab":
            pattern, i = pattern + choice, i + 1
        else:
            pattern, i = pattern + ("\\" + path[i] if path[i] in "?+" else path[i]), i + 1
    if draw(st.booleans()):
        pattern = draw(st.sampled_from(["", "**/", "*/"])) + pattern
    if draw(st.booleans()):
        path = draw(_ORDINARY_PATH) if draw(st.booleans()) else path + "/" + draw(_SEGMENT)
    return pattern, path


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(pair=_pattern_and_a_path_near_it())
def test_the_linear_matcher_agrees_with_the_wcmatch_one_on_near_misses(
    pair: tuple[str, str],
) -> None:
    pattern, path = pair
    assert glob_matches(pattern, path) is _wcmatch_glob_matches(pattern, path)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@example(pattern="**/**/b", path="b")
@example(pattern="a/**", path="a")
@example(pattern="**.js", path="a/b.js")
@example(pattern="a**b", path="a/x/b")
@given(pattern=_PATTERN, path=_ORDINARY_PATH)
def test_the_linear_matcher_agrees_with_the_wcmatch_one_on_ordinary_paths(
    pattern: str, path: str
) -> None:
    """Same answer for every pattern on every path git can list (no empty segment, no
    ``.`` or ``..``, no trailing ``/``)."""
    assert glob_matches(pattern, path) is _wcmatch_glob_matches(pattern, path)


@pytest.mark.slow
def test_the_action_reads_paths_as_github_does(repo: Repo) -> None:
    """A bare folder name skips a pull request that edits files inside it, as GitHub would."""
    base = repo.head()
    repo.branch("feature", base)
    head = repo.commit({"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine.\n"}, "porto")

    skipped = repo.pull_request(3, base, head, paths="datasets\n*.toml")
    assert skipped.returncode == 0, skipped.log
    assert skipped.outputs["verdict"] == "skipped"
    assert [s["state"] for s in skipped.statuses] == ["success"]
    assert skipped.statuses[0]["description"].startswith("skipped")

    evaluated = repo.pull_request(4, base, head, paths="datasets/**\n!**/*.txt")
    assert evaluated.returncode == 0, evaluated.log
    assert evaluated.outputs["verdict"] == "baseline-established"
