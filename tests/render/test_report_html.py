"""report.html: one self-contained page a reviewer opens from the workflow's artifact.

The page is read as a browser reads it: an HTML parser for what it holds (every user
string escaped, nothing fetched, one point per query with its hover text), and Debian's
headless Chromium for a page written by a real `retrieval-eval run`, which must load
without a single console message (no error, no blocked fetch, no script at all).
"""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.render.challengers import BEATS_MARK, p_phrase
from retrieval_eval.render.charts import BETTER, MAX_POINTS
from retrieval_eval.render.escape import visible
from retrieval_eval.render.filters import number, p_value, signed
from retrieval_eval.render.links import ReportLinks
from retrieval_eval.render.markdown import HEADLINE_METRICS
from retrieval_eval.render.report_html import render_html
from retrieval_eval.results import (
    ChallengerMetric,
    ChallengerResult,
    DatasetChallengers,
    QueryMove,
    QueryResult,
)
from tests.action.git_repo import commit_all, write
from tests.action.project import REGRESSING_NOTES, fixture_lines, new_project
from tests.commands.test_run import CONFIG
from tests.render.reports import dataset, mrr_row, query, report
from tests.support import browser
from tests.support.action import run_cli


class Page(HTMLParser):
    """Every element with its attributes, the text of each <title>, and the page's text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.titles: list[str] = []
        self.text: list[str] = []
        self._title: list[str] | None = None
        self._cells: list[list[str]] = []
        self.raw = text
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "title":
            self._title = []
        if tag in ("td", "th"):
            self._cells.append([])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._title is not None:
            self.titles.append("".join(self._title))
            self._title = None

    def handle_data(self, data: str) -> None:
        if self._cells:
            self._cells[-1].append(data)
        if self._title is not None:
            self._title.append(data)
        self.text.append(data)

    def cells(self) -> list[str]:
        """The text of each table cell, in order."""
        return ["".join(cell).strip() for cell in self._cells]

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.elements if tag == name]


def typed(qid: str, text: str, kind: str, *, rank: int | None = 1) -> QueryResult:
    return query(qid, text, rank=rank).model_copy(update={"query_type": kind})


def move(qid: str, text: str, before: int | None, after: int | None) -> QueryMove:
    return QueryMove(
        query_id=qid,
        query=text,
        metric="mrr@10",
        baseline=0.0 if before is None else 1 / before,
        current=0.0 if after is None else 1 / after,
        rank_before=before,
        rank_after=after,
        top_after="doc-b",
    )


def three_queries() -> str:
    queries = [
        typed("q-1", "steady query", "keyword"),
        typed("q-2", "lost query", "synonym", rank=None),
        typed("q-3", "slipped query", "synonym", rank=3),
    ]
    moves = [move("q-2", "lost query", 1, None), move("q-3", "slipped query", 1, 3)]
    built = dataset(queries, rows=[mrr_row(1.0, 0.44, "regressed")], moves=moves)
    return render_html(report([built]))


def test_each_shared_query_is_a_point_coloured_by_type_with_its_ranks_on_hover() -> None:
    page = Page(three_queries())

    points = [c for c in page.tags("circle") if c.get("class") == "point"]
    assert len(points) == 3
    fills = {c["fill"] for c in points}
    assert len(fills) == 2  # keyword and synonym
    hovers = [t for t in page.titles if t.startswith("q-")]
    assert sorted(h.splitlines()[0] for h in hovers) == [
        "q-1 (keyword): steady query",
        "q-2 (synonym): lost query",
        "q-3 (synonym): slipped query",
    ]
    by_id = {h.split(" ", 1)[0]: h for h in hovers}
    assert by_id["q-2"].endswith("first relevant rank 1 → —")
    assert by_id["q-3"].endswith("first relevant rank 1 → 3")
    assert by_id["q-1"].endswith("first relevant rank 1 → 1")  # unchanged MRR, unchanged rank
    assert "keyword (1)" in page.text and "synonym (2)" in page.text


def test_the_rank_changes_are_counted_per_bucket() -> None:
    page = Page(three_queries())

    assert "lost: 1 query" in page.titles
    assert "down 2–4: 1 query" in page.titles
    assert "same rank: 1 query" in page.titles


def test_the_change_of_each_metric_is_drawn_with_its_interval() -> None:
    page = Page(three_queries())

    assert "MRR@10: −0.050 [−0.120, +0.010]" in page.titles


def test_trend_lines_appear_only_with_a_history() -> None:
    queries = [typed("q-1", "steady", "keyword")]
    plain = report([dataset(queries, rows=[mrr_row(1.0, 1.0)])])
    recorded = plain.model_copy(update={"history": {"hybrid.jsonl": {"mrr@10": (0.9, 0.95)}}})

    assert not Page(render_html(plain)).tags("polyline")
    page = Page(render_html(recorded))
    assert len(page.tags("polyline")) == 1
    assert "MRR@10 1.000 (this run)" in page.titles
    assert "MRR@10 0.900 (run 1 of 2)" in page.titles


def test_nothing_is_fetched_and_nothing_runs() -> None:
    text = three_queries()
    page = Page(text)

    assert not page.tags("script") and not page.tags("link") and not page.tags("img")
    assert all("src" not in attrs for _, attrs in page.elements)
    csp = [m for m in page.tags("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")
    assert not [a for a in page.tags("a") if (a.get("href") or "").startswith("http")]


def test_with_the_actions_links_query_ids_link_to_their_fixture_line() -> None:
    queries = [typed("q-2", "lost query", "synonym", rank=None).model_copy(update={"line": 12})]
    built = dataset(
        queries, rows=[mrr_row(1.0, 0.0, "regressed")], moves=[move("q-2", "l", 1, None)]
    )
    links = ReportLinks.for_commit(
        server_url="https://github.com/",
        repository="octo/notes",
        sha="b" * 40,
        run_id="77",
        datasets_path="datasets",
    )
    page = Page(render_html(report([built]), links=links))

    hrefs = [a.get("href") for a in page.tags("a")]
    assert f"https://github.com/octo/notes/blob/{'b' * 40}/datasets/hybrid.jsonl#L12" in hrefs
    assert "https://github.com/octo/notes/actions/runs/77" in hrefs


HOSTILE = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40
)


@settings(max_examples=60, deadline=None)
@given(qid=HOSTILE, text=HOSTILE, kind=HOSTILE)
def test_user_text_is_shown_as_text_never_as_markup(qid: str, text: str, kind: str) -> None:
    hostile = f'<script>alert(1)</script>"><img src=x onerror=alert(2)>{text}'
    queries = [typed(qid, hostile, kind, rank=None)]
    built = dataset(
        queries, rows=[mrr_row(1.0, 0.0, "regressed")], moves=[move(qid, hostile, 1, None)]
    )
    page = Page(render_html(report([built])))

    assert not page.tags("script") and not page.tags("img")
    assert not [attrs for _, attrs in page.elements if any(k.startswith("on") for k in attrs)]
    points = [c for c in page.tags("circle") if c.get("class") == "point"]
    assert len(points) == 1
    hover = f"{visible(qid)} ({visible(kind)}): {visible(hostile)}"
    assert hover in [title.split("\n")[0] for title in page.titles]


# --- in a real browser, from a real run ---------------------------------------------------


def typed_fixtures() -> str:
    """The project's keyword fixtures, each with a query type (the scatter's colours)."""
    kinds = ["exact_match", "exact_match", "synonym", "synonym", "paraphrase", "paraphrase"]
    lines = []
    for line, kind in zip(fixture_lines().splitlines(), kinds, strict=True):
        fixture = json.loads(line)
        fixture["query_type"] = kind
        lines.append(json.dumps(fixture))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def regressed_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of a run that lost two queries' answers, against a real baseline."""
    project = tmp_path_factory.mktemp("html") / "project"
    new_project(project)
    write(project, {"datasets/keyword.jsonl": typed_fixtures()})
    commit_all(project, "typed fixtures")
    first = run_cli(project, "run")
    assert first.returncode == 0, first.log
    write(project, REGRESSING_NOTES)
    second = run_cli(project, "run")
    assert second.returncode == 1, second.log
    page = project / "retrieval-eval-report" / "report.html"
    assert str(page.relative_to(project)) in second.stderr  # `run` says where it is
    return page


@pytest.mark.slow
def test_report_html_loads_in_chromium_without_a_console_message(regressed_page: Path) -> None:
    loaded = browser.load(regressed_page)

    assert loaded.console == []
    dom = Page(loaded.dom)
    assert len([c for c in dom.tags("circle") if c.get("class") == "point"]) == 6
    assert any(t.startswith("k-005 (paraphrase): ") and "1 → —" in t for t in dom.titles)
    assert "Regression: keyword.jsonl" in "".join(dom.text)


@pytest.mark.slow
def test_the_browser_check_catches_a_page_that_errs(tmp_path: Path) -> None:
    """The check above can fail: a script error and a blocked fetch each log a message."""
    broken = tmp_path / "broken.html"
    broken.write_text(
        '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src '
        "'none'; script-src 'unsafe-inline'\"><script>missingFunction()</script>"
        '<img src="https://example.org/x.png">',
        encoding="utf-8",
    )

    console = browser.load(broken).console

    assert any("missingFunction is not defined" in line for line in console), console
    assert any("Content Security Policy" in line for line in console), console


def test_a_large_dataset_draws_every_moved_query_and_says_how_many_are_left_out() -> None:
    queries = [typed(f"q-{i:05d}", f"query {i}", "keyword") for i in range(MAX_POINTS + 500)]
    moved = [move("q-00007", "query 7", 1, None)]
    queries[7] = typed("q-00007", "query 7", "keyword", rank=None)
    built = dataset(queries, rows=[mrr_row(1.0, 0.99, "ok")], moves=moved)

    page = Page(render_html(report([built])))

    points = [c for c in page.tags("circle") if c.get("class") == "point"]
    assert len(points) == MAX_POINTS
    assert any(t.startswith("q-00007 (keyword): query 7") for t in page.titles)
    assert "500 unchanged queries are not drawn" in " ".join("".join(page.text).split())


# --- the challengers, from a real run ----------------------------------------------------

TWO_CHALLENGERS = """
[challengers.like-words]
retriever = "like"
datasets = ["keyword.jsonl"]

[challengers.stemmed]
retriever = "bm25"
datasets = ["keyword.jsonl"]

[challengers.stemmed.bm25]
stemming = true
"""


@pytest.fixture(scope="module")
def challenged_run(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    """A `retrieval-eval run` with two `[challengers.NAME]` tables, on the keyword fixtures."""
    project = tmp_path_factory.mktemp("challenged") / "project"
    shutil.copytree(repo_root / "datasets", project / "datasets")
    (project / "retrieval-eval.toml").write_text(
        CONFIG.replace("MRR_BOUND", '"mrr@10" = false') + TWO_CHALLENGERS, encoding="utf-8"
    )
    run = run_cli(project, "run", "--no-progress")
    assert run.returncode == 0, run.log
    return project / "retrieval-eval-report"


def _challenger_rows(page: Page, dataset_name: str) -> dict[str, list[str]]:
    """The cells of each row of a dataset's challenger table, by the row's first cell."""
    text = page.raw
    start = text.index(f"<h3>Challengers on {dataset_name}")
    table = text[start:].split("<table", 1)[1].split("</table>", 1)[0]
    rows = {}
    for raw in table.split("<tr>")[2:]:
        cells = Page(f"<table><tr>{raw}</table>").cells()
        rows[cells[0]] = cells
    return rows


@pytest.mark.slow
def test_report_html_shows_each_challenger_with_report_jsons_p_values(
    challenged_run: Path,
) -> None:
    report_json = json.loads((challenged_run / "report.json").read_text(encoding="utf-8"))
    page = Page((challenged_run / "report.html").read_text(encoding="utf-8"))
    (keyword,) = [c for c in report_json["challengers"] if c["dataset"] == "keyword.jsonl"]
    headline = report_json["measures"][:HEADLINE_METRICS]

    rows = _challenger_rows(page, "keyword.jsonl")

    assert rows["bm25 (gated)"][1] == "bm25"
    assert sorted(name for name in rows if name != "bm25 (gated)") == ["like-words", "stemmed"]
    for challenger in keyword["challengers"]:
        cells = rows[challenger["name"]]
        assert cells[1] == challenger["retriever"]
        by_metric = {m["metric"]: m for m in challenger["metrics"]}
        for index, metric in enumerate(headline):
            value, delta, p = cells[2 + 3 * index : 5 + 3 * index]
            assert p == p_value(by_metric[metric]["p_value"])
            assert delta.removesuffix(f" {BEATS_MARK}") == signed(
                by_metric[metric]["delta"], metric
            )
            assert value == number(by_metric[metric]["value"], metric)
        wtl = f"{challenger['wins']}/{challenger['ties']}/{challenger['losses']}"
        assert cells[2 + 3 * len(headline)] == wtl
    # one Δ chart per headline metric, a bar per challenger with its p on hover
    first = keyword["challengers"][0]
    metric = headline[0]
    shown = {m["metric"]: m for m in first["metrics"]}[metric]
    hover = f"{first['name']}: {signed(shown['delta'], metric)}, p {p_phrase(shown['p_value'])}"
    assert hover in page.titles


@pytest.mark.slow
def test_report_html_with_challengers_loads_in_chromium_without_a_console_message(
    challenged_run: Path,
) -> None:
    loaded = browser.load(challenged_run / "report.html")

    assert loaded.console == []
    text = " ".join("".join(Page(loaded.dom).text).split())
    assert "Challengers on keyword.jsonl" in text and "like-words" in text


def test_a_hostile_challenger_name_and_note_are_text_in_the_table() -> None:
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    one = DatasetChallengers(
        dataset=f"{hostile}.jsonl",
        reference="bm25",
        num_queries=3,
        wtl_metric="mrr@10",
        latency_p95_ms=1.0,
        cost_per_query_usd=0.0,
        challengers=(
            ChallengerResult(name=hostile, retriever="like", warning=f"{hostile} failed"),
            ChallengerResult(
                name="up",
                retriever="bm25",
                metrics=(
                    ChallengerMetric(
                        metric="mrr@10",
                        reference=0.5,
                        value=0.75,
                        delta=0.25,
                        p_value=0.01,
                        p_uncorrected=0.005,
                    ),
                ),
                wins=2,
                ties=1,
                losses=0,
                beats=("mrr@10",),
            ),
        ),
    )
    built = report([dataset([typed("q-1", "steady", "keyword")], rows=[mrr_row(1.0, 1.0)])])
    page = Page(render_html(built.model_copy(update={"challengers": (one,)})))

    assert not page.tags("script") and not page.tags("img")
    text = "".join(page.text)
    assert hostile in text and f"⚠️ {hostile} failed" in text
    assert "up: +0.250, p = 0.010" in page.titles  # the one with numbers has a bar
    bars = [line for line in page.tags("line") if line.get("stroke-width") == "3"]
    assert BETTER in {bar.get("stroke") for bar in bars}  # a positive Δ is drawn green
