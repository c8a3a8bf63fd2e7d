"""A team's first week, end to end: `init` on a docs folder beside the team's own retriever,
fixtures written by hand (here by the test, from `corpus ids`, no LLM), `validate`, `run`,
the adoption pull request, then a pull request that makes retrieval worse.

Every step is what the user types: the `retrieval-eval` console script in the project, and
`retrieval-eval action` under the runner's environment against the fake GitHub API for the
two pull requests. The retriever is the team's own TF-IDF module in `search/retriever.py`
(standard library only), which `init` must find and wire as `[retrievers.custom]`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, git
from tests.author.cli import retrieval_eval
from tests.security.harness import Repo
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

RETRIEVER = '''\
"""The docs search: TF-IDF over each page's title and text."""

import math
import re
from collections import Counter

from retrieval_eval.api import Corpus, Hit, SearchResult

WORD = re.compile(r"\\w+")


def words(text):
    return [word.lower() for word in WORD.findall(text)]


class DocsSearch:
    name = "docs-tfidf"

    def __init__(self, title_weight: int = TITLE_WEIGHT, idf: bool = USE_IDF):
        self.title_weight = title_weight
        self.use_idf = idf

    def index(self, corpus: Corpus) -> None:
        self.pages = {}
        frequency = Counter()
        for page in corpus.documents:
            terms = Counter(words(page.title) * self.title_weight + words(page.text))
            self.pages[page.id] = (terms, page.text[:300], set(page.tags))
            frequency.update(set(terms))
        self.idf = {
            term: math.log(1 + len(self.pages) / n) if self.use_idf else 1.0
            for term, n in frequency.items()
        }

    def search(self, query, k, tags=()):
        scores = {}
        for page_id, (terms, text, page_tags) in self.pages.items():
            if tags and not page_tags & set(tags):
                continue
            total = sum(terms.values()) or 1
            score = sum(terms[t] / total * self.idf.get(t, 0.0) for t in words(query))
            if score > 0:
                scores[page_id] = round(score, 9)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return SearchResult(hits=tuple(Hit(i, s, self.pages[i][1]) for i, s in ranked))

    def describe(self):
        return {"title_weight": self.title_weight, "idf": self.use_idf}


def make_retriever() -> DocsSearch:
    return DocsSearch()
'''


def _retriever(*, title_weight: int, idf: bool) -> str:
    return RETRIEVER.replace("TITLE_WEIGHT", str(title_weight)).replace("USE_IDF", str(idf))


def _fixtures(project: Path) -> dict[str, list[dict[str, object]]]:
    """Three dataset files written from `corpus ids --titles`, as a person would: each page's
    title asked as a keyword query, its words reordered as a hybrid one, and its first
    sentence as a semantic one."""
    listed = retrieval_eval("corpus", "ids", "--titles", cwd=project)
    assert listed.returncode == 0, listed.stderr
    pages = [line.split("\t") for line in listed.stdout.splitlines()]
    assert len(pages) >= 25 and all(len(page) == 2 for page in pages)
    assert f"{len(pages)} documents in" in listed.stderr
    files: dict[str, list[dict[str, object]]] = {"keyword": [], "hybrid": [], "semantic": []}
    for n, (page_id, title) in enumerate(pages[:25]):
        text = (project / "docs" / f"{page_id}.md").read_text()
        # The first paragraph of prose (front matter, headings and lists are not prose).
        prose = [line for line in text.splitlines() if len(line) > 60 and line[0].isalpha()]
        sentence = (prose[0] if prose else title).split(". ")[0]
        queries = {
            "keyword": title,
            "hybrid": " ".join(reversed(title.split())),
            "semantic": " ".join(sentence.split()[:12]),
        }
        for kind, query in queries.items():
            files[kind].append(
                {
                    "query_id": f"{kind[:3]}-{n:03d}",
                    "query": query,
                    "retrieval_type": kind,
                    "expected_top_k_ids": [page_id],
                    "ground_truth_source": "human-annotated",
                }
            )
    return files


def _write(path: Path, fixtures: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(f) + "\n" for f in fixtures))


@pytest.mark.slow
def test_a_teams_first_week_from_init_to_a_blocked_regression(
    tmp_path: Path, repo_root: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(repo_root / "datasets" / "corpus", project / "docs")
    (project / "search").mkdir()
    (project / "search" / "__init__.py").write_text("")
    (project / "search" / "retriever.py").write_text(_retriever(title_weight=3, idf=True))
    (project / "README.md").write_text("# our docs\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    main = commit_all(project, "docs and their search, before retrieval-eval")
    git(project, "checkout", "-q", "-b", "adopt-retrieval-eval")

    # init finds the docs and the retriever, and wires the retriever for every dataset.
    init = retrieval_eval("init", cwd=project)
    assert init.returncode == 0, init.stderr
    notes = sum(1 for _ in (project / "docs").rglob("*.md"))
    assert f"corpus: docs ({notes} Markdown notes in a documentation folder)" in init.stdout
    assert "retrieval code: search\n" in init.stdout
    assert "retriever: custom, python = 'search.retriever:make_retriever'" in init.stdout
    config = tomllib.loads((project / "retrieval-eval.toml").read_text())
    assert config["retrievers"]["custom"] == {"python": "search.retriever:make_retriever"}
    assert config["dataset_retrievers"] == {
        "semantic.jsonl": "custom",
        "keyword.jsonl": "custom",
        "hybrid.jsonl": "custom",
    }

    # Fixtures by hand, from the ids `corpus ids` lists; one written as a file path first.
    files = _fixtures(project)
    first = files["keyword"][0]
    first["expected_top_k_ids"] = [f"{first['expected_top_k_ids'][0]}.md"]  # type: ignore[index]
    for kind, fixtures in files.items():
        _write(project / "datasets" / f"{kind}.jsonl", fixtures)
    typo = retrieval_eval("validate", "datasets", cwd=project)
    assert typo.returncode == 1, typo.stdout + typo.stderr
    wrong = first["expected_top_k_ids"][0]  # type: ignore[index]
    assert f"did you mean {wrong.removesuffix('.md')!r}?" in typo.stdout
    assert typo.stderr.strip().endswith("1 problem in 1 file of the 3 files validated")
    first["expected_top_k_ids"] = [wrong.removesuffix(".md")]
    _write(project / "datasets" / "keyword.jsonl", files["keyword"])
    valid = retrieval_eval("validate", "datasets", cwd=project)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "ok: 3 files, 75 fixtures" in valid.stderr.splitlines()
    # Without --corpus, the corpus is the one the configuration names, as `run` reads it.
    assert "checking expected ids against the configured corpus docs" in valid.stderr

    # The first run measures the team's retriever and writes the baseline.
    run = retrieval_eval("run", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((project / "retrieval-eval-report" / "report.json").read_text())
    assert report["verdict"] == "baseline-established"
    assert {d["retriever"] for d in report["datasets"]} == {"custom"}
    baseline = json.loads((project / "baseline.json").read_text())
    assert sorted(baseline["datasets"]) == ["hybrid.jsonl", "keyword.jsonl", "semantic.jsonl"]
    adoption_head = commit_all(project, "add retrieval-eval")
    assert git(project, "status", "--porcelain") == ""

    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        repo = Repo(path=project, runs=tmp_path / "runs", github=github)

        adoption = repo.pull_request(1, main, adoption_head)
        assert adoption.returncode == 0, adoption.log
        assert adoption.outputs["verdict"] == "baseline-established", adoption.log
        assert [s["state"] for s in adoption.statuses] == ["success"]
        assert adoption.outputs["report-html"].endswith("report.html")
        lines = _body(adoption.comment)
        # The adoption pull request says what it does, once: no baseline-changed warning.
        assert lines[0].startswith("📌 **Baseline established: hybrid.jsonl NDCG@10"), lines[:3]
        assert lines[1:3] == [
            "> [!WARNING]",
            "> 🌱 **This pull request adds retrieval-eval.** The base commit has no "
            "configuration and no baseline, so this run is evaluated with the pull request's "
            "own settings and establishes the baseline; the gate starts after merge.",
        ]
        assert adoption.comment.count("[!WARNING]") == 1, adoption.comment
        assert "The gate used the version at the base commit" not in adoption.comment
        assert "The gate and trust settings come from the defaults" not in adoption.log
        assert "/actions/runs/" in adoption.comment and "report.html" in adoption.comment

        # Merged. A later pull request "simplifies" the scoring: every word weighs the same.
        git(project, "checkout", "-q", "-B", "main", adoption_head)
        git(project, "checkout", "-q", "-b", "simplify-search")
        worse = repo.commit(
            {"search/retriever.py": _retriever(title_weight=3, idf=False)}, "simplify the scoring"
        )
        regression = repo.pull_request(2, adoption_head, worse)

    assert regression.outputs["verdict"] == "regression", regression.log
    assert regression.returncode == 1, regression.log
    assert [s["state"] for s in regression.statuses] == ["failure"]
    lines = _body(regression.comment)
    assert lines[0].startswith("❌ **Regression: "), lines[:3]
    assert "semantic.jsonl NDCG@10 1.000 → " in lines[0], lines[:3]
    assert lines[1] == "| Dataset | MRR@10 | Δ | NDCG@10 | Δ | Status |"
    assert lines[3].startswith("| semantic.jsonl | ")
    assert "❌\u00a0regressed:\u00a0NDCG@10" in lines[3]  # non-breaking spaces keep it on a line
    assert "[!WARNING]" not in regression.comment
    # The setting the team changed in its own retriever is named as theirs.
    assert "idf: True → False" in regression.comment
    assert "Your retriever's `describe()` reports these" in regression.comment
    assert "default changed between releases" not in regression.comment
    raw = regression.comment.splitlines()
    note = next(n for n, line in enumerate(raw) if line.startswith("⚠️ **The retriever config"))
    assert raw[note + 1] == ""  # the table after it starts a block of its own


def _body(comment: str) -> list[str]:
    """The comment's lines after the sticky marker and the evaluated-commit tag."""
    return [line for line in comment.splitlines() if line and not line.startswith("<!--")]
