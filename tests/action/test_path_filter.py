from __future__ import annotations

import pytest

from retrieval_eval.action.path_filter import PathFilter


@pytest.mark.parametrize(
    ("patterns", "path", "expected"),
    [
        (("datasets/**",), "datasets/corpus/recipes/shakshuka.md", True),
        (("datasets/**",), "src/app.py", False),
        (("*.jsonl",), "keyword.jsonl", True),
        (("*.jsonl",), "datasets/keyword.jsonl", False),  # `*` stays within one folder
        (("**/*.jsonl",), "datasets/keyword.jsonl", True),
        (("**/*.jsonl",), "keyword.jsonl", True),  # `**/` also matches no folder
        (("datasets",), "datasets/keyword.jsonl", True),  # a folder covers its contents
        (("data?ets/*.jsonl",), "datasets/keyword.jsonl", True),
        (("datasets/[ks]*.jsonl",), "datasets/semantic.jsonl", True),
        (("datasets/[!ks]*.jsonl",), "datasets/semantic.jsonl", False),
        (("datasets/**", "!datasets/**/*.txt"), "datasets/notes/readme.txt", False),
        (("datasets/**", "!datasets/**/*.txt"), "datasets/notes/a.md", True),
        # later lines win, as in GitHub's own `paths:` filter
        (
            ("datasets/**", "!datasets/drafts/**", "datasets/drafts/keep.md"),
            "datasets/drafts/keep.md",
            True,
        ),
        (("!docs/**",), "src/app.py", True),  # only exclusions: everything else counts
        (("!docs/**",), "docs/a.md", False),
        (("/baseline.json",), "baseline.json", True),
        (("a+b.md",), "a+b.md", True),  # regex characters are literal
        (("a+b.md",), "aab.md", False),
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
