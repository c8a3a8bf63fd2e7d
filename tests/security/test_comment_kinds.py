"""Every comment the Action posts keeps user text inert, whatever the verdict.

Threat: a pull request author controls dataset files, fixture keys, query text,
the config file and (on the base side of a fork) even file names. Whatever they
write may land in the PR comment. There it must not become HTML (an ``<img
onerror>``), must not notify anyone (``@octocat``), and must not escape a code
block (a TOML key holding a newline and three backticks). Each comment kind is
produced by `retrieval-eval action` and rendered with cmark-gfm, GitHub's own
Markdown renderer, and what a reviewer would see is checked.
"""

from __future__ import annotations

import json
import re
import sys
from html.parser import HTMLParser

import pytest

from tests.action.project import CONFIG, REGRESSING_NOTES, fixture_lines
from tests.render.github_html import read, to_html
from tests.security.harness import Repo

pytestmark = pytest.mark.slow

# GitHub's word characters are ASCII: after "é" the "@" still notifies.
HOSTILE = "<img src=x onerror=alert(1)> @octocat café@octocat"
# GitHub links `@name` when the `@` does not follow a word character.
LIVE_MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9]")
# What Markdown itself produces, plus the <details>/<summary> our report uses on purpose.
MARKDOWN_TAGS = {
    *("p", "h1", "h2", "h3", "h4", "ul", "ol", "li", "strong", "em", "code", "pre", "br"),
    *("table", "thead", "tbody", "tr", "th", "td", "blockquote", "hr", "del", "a"),
    *("details", "summary", "sub", "sup", "div", "span"),
}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def assert_inert(markdown: str, *, shows: str | None = HOSTILE) -> None:
    html = to_html(markdown)
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag in MARKDOWN_TAGS, f"raw HTML <{tag}> in the comment:\n{markdown}"
        handlers = [name for name, _ in attrs if name.startswith("on")]
        assert not handlers, f"<{tag}> carries {handlers}:\n{markdown}"
    page = read(markdown)
    mentions = LIVE_MENTION.findall(page.text)
    assert not mentions, f"live mention(s) {mentions} in:\n{page.text}"
    # The text is shown, not swallowed: a reviewer can see what the author wrote.
    if shows is not None:
        visible = shows.replace("@", "@\u200b")
        assert visible in page.text, f"{visible!r} is not visible in:\n{page.text}"


def hostile_fixture(query_id: str) -> str:
    return json.dumps(
        {
            "query_id": query_id,
            "query": f"eggs poached in tomato sauce {HOSTILE}",
            "retrieval_type": "keyword",
            "expected_top_k_ids": ["recipes/shakshuka"],
            "ground_truth_source": "human-annotated",
        }
    )


def test_the_report_comments_keep_user_text_inert(repo: Repo) -> None:
    """baseline-established, passed and regression: the normal report."""
    main = repo.head()
    repo.branch("first", main)
    dataset = fixture_lines() + hostile_fixture("k-007") + "\n"
    first = repo.commit({"datasets/keyword.jsonl": dataset}, "hostile query text")
    established = repo.pull_request(1, main, first)
    assert established.outputs["verdict"] == "baseline-established", established.log
    assert_inert(established.comment, shows=None)  # no query is listed on a first run

    repo.branch("main", first)
    with_baseline = repo.establish_baseline()
    repo.branch("same", with_baseline)
    same = repo.commit({"README.md": "# notes search, again\n"}, "docs")
    passed = repo.pull_request(2, with_baseline, same)
    assert passed.outputs["verdict"] == "passed", passed.log
    assert_inert(passed.comment, shows="Passed")

    repo.branch("worse", with_baseline)
    worse = repo.commit(REGRESSING_NOTES, "lose two answers")
    worse = repo.commit(
        {"datasets/corpus/recipes/shakshuka.md": "# Shakshuka\n\nA dish.\n"}, "and the third"
    )
    regressed = repo.pull_request(3, with_baseline, worse)
    assert regressed.outputs["verdict"] == "regression", regressed.log
    assert_inert(regressed.comment, shows=f"tomato sauce {HOSTILE}")  # regressed most


def test_the_invalid_comment_keeps_user_text_inert(repo: Repo) -> None:
    main = repo.head()
    repo.branch("feature", main)
    bad_line = json.dumps(
        {
            "query_id": "k-007",
            "query": "x",
            "retrieval_type": "keyword",
            "expected_top_k_ids": ["recipes/shakshuka"],
            "ground_truth_source": "human-annotated",
            HOSTILE: 1,
        }
    )
    head = repo.commit({"datasets/keyword.jsonl": fixture_lines() + bad_line + "\n"}, "bad")
    run = repo.pull_request(4, main, head)
    assert run.outputs["verdict"] == "invalid", run.log
    assert "unknown field" in run.comment
    assert_inert(run.comment)
    assert_inert(run.summary)


def test_the_error_comment_for_a_corrupt_baseline_keeps_user_text_inert(repo: Repo) -> None:
    """The baseline comes from the base commit: its dataset names reach the error message."""
    corrupt = {"datasets": {f"{HOSTILE}.jsonl": {"queries": {}}}}
    base = repo.commit({"baseline.json": json.dumps(corrupt)}, "a damaged baseline")
    repo.branch("feature", base)
    head = repo.commit({"README.md": "# notes\n"}, "docs")
    run = repo.pull_request(5, base, head)
    assert run.outputs["verdict"] == "error", run.log
    assert "corrupt" in run.comment
    assert_inert(run.comment, shows=f"{HOSTILE}.jsonl")
    assert_inert(run.summary, shows=f"{HOSTILE}.jsonl")


def test_the_error_comment_for_bad_settings_keeps_user_text_inert(repo: Repo) -> None:
    """A TOML key with a newline and three backticks cannot close a code block."""
    main = repo.head()
    repo.branch("feature", main)
    config = (repo.path / "retrieval-eval.toml").read_text(encoding="utf-8")
    breakout = "x\\n```\\n" + HOSTILE.replace('"', '\\"')
    head = repo.commit(
        {"retrieval-eval.toml": f'"{breakout}" = 1\n' + config}, "a hostile config key"
    )
    run = repo.pull_request(6, main, head)
    assert run.outputs["verdict"] == "error", run.log
    assert "unknown key" in run.comment
    assert_inert(run.comment)
    assert_inert(run.summary)
    assert "```" not in run.comment.split("unknown key", 1)[1]


def test_the_failure_summary_for_a_bad_input_keeps_user_text_inert(repo: Repo) -> None:
    """An input comes from the workflow file, which a pull request can edit; an input error
    quotes it in the job summary, where three backticks must not open or close a block."""
    run = repo.push(repo.head(), tolerance=f"lots\n```\n{HOSTILE}")
    assert run.outputs["verdict"] == "error", run.log
    assert "input `tolerance`" in run.log
    assert_inert(run.summary)
    assert "```" not in run.summary


# A right-to-left override, an isolate, an escape sequence and a NUL: each would make the
# text (and what follows it) read as something it is not.
SPOOFING = "\u202eexe.txt\u2066x\u2069 \x1b[8mhidden\x00"
UNSHOWABLE = re.compile("[\u202a-\u202e\u2066-\u2069\x00-\x08\x0b-\x1f\x7f-\x9f]")
FAILING_RETRIEVER = f"""\
import json, sys
for line in sys.stdin:
    print(json.dumps({{"error": {SPOOFING!r}}}), flush=True)
"""


def test_direction_overrides_and_control_characters_are_shown_not_obeyed(repo: Repo) -> None:
    """The retriever (code a pull request can change) fails with text of its choosing: it
    is quoted in the comment, the summary and the commit status, shown there, not obeyed."""
    config = (
        CONFIG + '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f"command = {json.dumps([sys.executable, 'search.py'])}\n"
    )
    main = repo.commit({"search.py": FAILING_RETRIEVER, "retrieval-eval.toml": config}, "ours")
    repo.branch("feature", main)
    head = repo.commit({"README.md": "# notes, reworded\n"}, "docs")
    run = repo.pull_request(7, main, head)

    assert run.outputs["verdict"] == "error", run.log
    [status] = run.statuses
    for shown in (run.comment, run.summary, status["description"]):
        assert "exe.txt" in shown and "\ufffd" in shown, shown
        assert not UNSHOWABLE.search(shown), repr(shown)
