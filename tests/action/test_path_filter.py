"""`paths` means what GitHub's `on.pull_request.paths` means.

The table is every example of the "Patterns to match file paths" part of the
"Filter pattern cheat sheet" in GitHub's "Workflow syntax for GitHub Actions"
(docs.github.com, actions/reference/workflows-and-actions/workflow-syntax),
transcribed pattern by pattern with each listed match and non-match.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.action.path_filter import PathFilter
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
