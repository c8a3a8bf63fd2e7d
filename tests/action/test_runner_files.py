from __future__ import annotations

import io
from pathlib import Path

import pytest

from retrieval_eval.action.runner_files import RunnerFiles
from tests.support.runner_env import read_outputs


def test_multiline_values_survive_and_cannot_inject_outputs(tmp_path: Path) -> None:
    out = tmp_path / "github_output"
    hostile = "line one\nverdict<<EOF\npassed\nEOF\nverdict=passed"
    RunnerFiles(output_file=out).set_outputs({"report-markdown": hostile, "verdict": "regression"})
    assert read_outputs(out) == {"report-markdown": hostile, "verdict": "regression"}


def test_each_value_gets_its_own_random_delimiter(tmp_path: Path) -> None:
    out = tmp_path / "github_output"
    RunnerFiles(output_file=out).set_outputs({"a": "1", "b": "2"})
    headers = [line for line in out.read_text().splitlines() if "<<" in line]
    delimiters = {line.split("<<")[1] for line in headers}
    assert len(delimiters) == 2
    assert all(
        d.startswith("ghadelimiter_") and len(d) == len("ghadelimiter_") + 32 for d in delimiters
    )


def test_outputs_append_so_later_steps_keep_earlier_values(tmp_path: Path) -> None:
    out = tmp_path / "github_output"
    RunnerFiles(output_file=out).set_outputs({"verdict": "passed"})
    RunnerFiles(output_file=out).set_outputs({"comment-url": "https://x/1"})
    assert read_outputs(out) == {"verdict": "passed", "comment-url": "https://x/1"}


def test_summary_appends_and_ends_with_a_newline(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    RunnerFiles(summary_file=summary).append_summary("# one")
    RunnerFiles(summary_file=summary).append_summary("two\n")
    assert summary.read_text() == "# one\ntwo\n"


def test_error_annotation_escapes_properties_and_data() -> None:
    stream = io.StringIO()
    RunnerFiles(stream).error(
        "50% wrong\nsecond line", file="datasets/a,b:c.jsonl", line=7, title=None
    )
    assert stream.getvalue() == (
        "::error file=datasets/a%2Cb%3Ac.jsonl,line=7::50%25 wrong%0Asecond line\n"
    )


def test_warning_without_properties_has_no_space_before_the_separator() -> None:
    stream = io.StringIO()
    RunnerFiles(stream).warning("careful")
    assert stream.getvalue() == "::warning::careful\n"


def test_group_is_closed_even_when_the_phase_fails() -> None:
    stream = io.StringIO()
    commands = RunnerFiles(stream)
    with pytest.raises(RuntimeError), commands.group("Evaluation"):
        commands.info("working")
        raise RuntimeError("boom")
    assert stream.getvalue() == "::group::Evaluation\nworking\n::endgroup::\n"


def test_default_outputs_fill_only_what_nothing_set(tmp_path: Path) -> None:
    out = tmp_path / "github_output"
    files = RunnerFiles(output_file=out)
    files.set_outputs({"comment-url": "https://x/1"})
    files.default_outputs({"comment-url": "", "verdict": "error"})
    assert read_outputs(out) == {"comment-url": "https://x/1", "verdict": "error"}
