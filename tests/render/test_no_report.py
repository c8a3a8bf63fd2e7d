"""The comment of a run that produced no report: it leads with what went wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from retrieval_eval.author.scaffold import ACTION
from retrieval_eval.render.links import DOCS_URL, FACTORY_PACKAGES_DOCS
from tests.action.git_repo import git
from tests.security.harness import Repo, repo

__all__ = ["repo"]  # the fixture

FACTORY = """\
import sklearn  # installed on the author's machine, not where the Action runs

class MySearch:
    name = "my-search"
    def index(self, corpus): ...
    def search(self, query, k, tags=()): ...
    def describe(self): return {}

def make_retriever() -> MySearch:
    return MySearch()
"""


@pytest.mark.slow
def test_a_factory_missing_a_package_leads_the_comment_once_with_where_to_fix_it(
    repo: Repo,
) -> None:
    base = repo.establish_baseline()
    repo.branch("tfidf", base)
    # It also proposes a wider tolerance: a notice, which comes after the error.
    config = "tolerance = 0.1\n" + (repo.path / "retrieval-eval.toml").read_text()
    config += (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n'
        '[retrievers.custom]\npython = "my_search:make_retriever"\n'
    )
    head = repo.commit({"my_search.py": FACTORY, "retrieval-eval.toml": config}, "our search")

    run = repo.pull_request(7, base, head)

    assert run.outputs["verdict"] == "error", run.log
    assert [s["state"] for s in run.statuses] == ["error"]
    lines = [line for line in run.comment.splitlines() if line and not line.startswith("<!--")]
    assert lines[0] == "### ⚠️ retrieval-eval: error", lines[:4]
    assert lines[1] == "retrieval-eval could not evaluate:"
    assert lines[2].startswith("> ") and "No module named 'sklearn'" in lines[2], lines[:4]
    assert run.comment.count("No module named 'sklearn'") == 1, run.comment
    hint = next(line for line in lines if line.startswith("`sklearn` is not installed"))
    assert (
        "[How a factory gets its packages](https://github.com/org/retrieval-eval/blob/main/"
        "docs/retrievers.md#packages-a-python-factory-needs)" in hint
    )
    notice = next(n for n, line in enumerate(lines) if "changes settings a pull request" in line)
    assert notice > lines.index(hint)
    assert git(repo.path, "status", "--porcelain") == ""


def test_the_docs_link_names_the_actions_owner_and_a_heading_that_exists(
    repo_root: Path,
) -> None:
    assert DOCS_URL.split("/")[3] == ACTION.split("/")[0]
    page, anchor = FACTORY_PACKAGES_DOCS.removeprefix(DOCS_URL + "/").split("#")
    headings = re.findall(r"^#+ (.+)$", (repo_root / "docs" / page).read_text(), re.MULTILINE)
    slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
    assert anchor in slugs
