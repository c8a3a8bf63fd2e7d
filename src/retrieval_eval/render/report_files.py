"""report.json and report.md, written side by side and atomically."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.render.markdown import render_markdown
from retrieval_eval.results import RunReport

REPORT_JSON = "report.json"
REPORT_MARKDOWN = "report.md"


def report_json_text(report: RunReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class ReportFiles:
    json_path: Path
    markdown_path: Path
    markdown: str  # report.md's text, kept so nothing renders or reads it again


def write_report_files(
    report: RunReport, report_dir: Path, *, notices: Sequence[str] = ()
) -> ReportFiles:
    """Both texts are rendered before either file is replaced, so a rendering
    error leaves the previous pair intact rather than a mismatched one."""
    json_text = report_json_text(report)
    markdown = render_markdown(report, max_chars=None, notices=notices)
    json_path = report_dir / REPORT_JSON
    markdown_path = report_dir / REPORT_MARKDOWN
    atomic_write_text(json_path, json_text)
    atomic_write_text(markdown_path, markdown)
    return ReportFiles(json_path, markdown_path, markdown)
