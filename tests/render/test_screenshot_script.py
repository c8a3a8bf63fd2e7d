"""scripts/screenshot/render_comment_png.py: the page Chromium photographs for the README.

Only the HTML is built here; Chromium runs in the script itself (it is a documentation
tool, not part of the product), so these tests need neither Chromium nor npm.
"""

from __future__ import annotations

import importlib.util
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest

from retrieval_eval.action.comment import compose_body, marker, room_for_report
from retrieval_eval.render.markdown import render_markdown
from tests.render.reports import dataset, mrr_row, query, report

CSS = ".markdown-body { color: #1f2328; } /* stand-in for github-markdown-light.css */"


@pytest.fixture(scope="module")
def script(repo_root: Path) -> ModuleType:
    path = repo_root / "scripts" / "screenshot" / "render_comment_png.py"
    spec = importlib.util.spec_from_file_location("render_comment_png", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _CommentReader(HTMLParser):
    """Table rows inside the `.markdown-body` box, plus the tags and styles of the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.styles: list[str] = []
        self.pre_attrs: list[dict[str, str | None]] = []
        self._depth_in_body = 0
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "div" and (self._depth_in_body or "markdown-body" in classes):
            self._depth_in_body += 1
        if tag == "style":
            self._in_style = True
            self.styles.append("")
        if tag == "pre":
            self.pre_attrs.append(dict(attrs))
        if not self._depth_in_body:
            return
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False
        elif tag == "div" and self._depth_in_body:
            self._depth_in_body -= 1
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles[-1] += data
        if self._cell is not None:
            self._cell.append(data)


def read_page(page: str) -> _CommentReader:
    reader = _CommentReader()
    reader.feed(page)
    reader.close()
    return reader


def report_markdown() -> str:
    return render_markdown(
        report([dataset([query("q1", "lemon | tart")], rows=[mrr_row(0.8, 0.76)])]),
        max_chars=None,
    )


def test_page_holds_the_comment_tables_inside_markdown_body_with_the_css_inlined(
    script: ModuleType,
) -> None:
    page = script.build_comment_html(report_markdown(), css=CSS, mermaid_js=None)
    reader = read_page(page)

    assert CSS in reader.styles[0]
    header = ["Metric", "Baseline", "Current", "Δ", "Δ%", "p", "Resolution", "Threshold", "Status"]
    assert header in reader.rows
    assert [
        "MRR@10",
        "0.800",
        "0.760",
        "−0.040",
        "−5.0%",
        "—",
        "—",
        "≥ 0.75",
        "✅ ok",
    ] in reader.rows
    assert "<details><summary>" in page  # raw HTML kept, as GitHub keeps it for comments


def test_page_fetches_nothing(script: ModuleType) -> None:
    page = script.build_comment_html(report_markdown(), css=CSS, mermaid_js=None)

    assert "default-src 'none'" in page
    assert "http://" not in page and "https://" not in page
    assert "<link" not in page and " src=" not in page


def test_mermaid_chart_is_drawn_by_the_inlined_library_or_left_as_code(
    script: ModuleType,
) -> None:
    chart = "```mermaid\nxychart-beta\n  bar [0.8]\n```\n"
    library = "var mermaid = {}; // '</script>' must not end the inline script"

    drawn = script.build_comment_html(chart, css=CSS, mermaid_js=library)
    as_code = script.build_comment_html(chart, css=CSS, mermaid_js=None)

    assert read_page(drawn).pre_attrs == [{"class": "mermaid"}]
    assert "var mermaid = {}; // '<\\/script>' must not end" in drawn
    assert read_page(as_code).pre_attrs == [{"lang": "mermaid"}]
    assert "var mermaid" not in as_code


def test_raw_script_tags_are_neutralised_like_on_github(script: ModuleType) -> None:
    page = script.build_comment_html("<script>alert(1)</script>\n", css=CSS, mermaid_js=None)

    assert "&lt;script>alert(1)&lt;/script>" in page


def test_report_json_becomes_the_body_the_action_posts(script: ModuleType, tmp_path: Path) -> None:
    run_report = report([dataset([query("q1", "one")], rows=[mrr_row(0.8, 0.76)])])
    report_json = tmp_path / "report.json"
    report_json.write_text(run_report.model_dump_json(), encoding="utf-8")

    body = script.comment_markdown(report_json)

    assert body.startswith(marker("default") + "\n")
    assert body == compose_body(
        "default", render_markdown(run_report, max_chars=room_for_report("default"))
    )


def test_markdown_file_is_taken_as_the_body(script: ModuleType, tmp_path: Path) -> None:
    report_md = tmp_path / "report.md"
    report_md.write_text(report_markdown(), encoding="utf-8")

    assert script.comment_markdown(report_md) == report_markdown()


def test_chosen_sections_are_shown_expanded_the_rest_stay_collapsed(script: ModuleType) -> None:
    markdown = (
        "<details><summary>Queries that regressed most (3)</summary>\n\nrows\n\n</details>\n\n"
        "<details><summary>Environment</summary>\n\nversions\n\n</details>\n"
    )

    page = script.build_comment_html(
        markdown, css=CSS, mermaid_js=None, opened=["Queries that regressed"]
    )

    assert "<details open><summary>Queries that regressed most (3)</summary>" in page
    assert "<details><summary>Environment</summary>" in page
