"""`--progress/--no-progress`: the choice given wins; without one, the bar is shown only
when stderr is a terminal (a real pseudo-terminal here) and CI is not set."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import pytest

from retrieval_eval.commands.progress_flag import show_progress
from tests.author.cli import retrieval_eval


@pytest.fixture
def terminal() -> Iterator[TextIO]:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as stream:
        try:
            yield stream
        finally:
            os.close(leader)


@pytest.mark.parametrize("ci", [None, "true"])
@pytest.mark.parametrize("choice", [True, False])
def test_the_flag_given_wins(
    monkeypatch: pytest.MonkeyPatch, terminal: TextIO, choice: bool, ci: str | None
) -> None:
    monkeypatch.setattr(sys, "stderr", terminal)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert show_progress(choice) is choice


def test_without_the_flag_a_terminal_outside_ci_shows_the_bar(
    monkeypatch: pytest.MonkeyPatch, terminal: TextIO
) -> None:
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.delenv("CI", raising=False)
    assert show_progress(None) is True
    monkeypatch.setenv("CI", "true")
    assert show_progress(None) is False
    monkeypatch.setenv("CI", "")  # set but empty is not CI
    assert show_progress(None) is True


def test_without_the_flag_a_pipe_gets_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with (tmp_path / "log").open("w", encoding="utf-8") as log:
        monkeypatch.setattr(sys, "stderr", log)
        assert show_progress(None) is False


def test_the_commands_with_slow_steps_take_the_flag_and_refuse_a_value(tmp_path: Path) -> None:
    for command in (("beir",), ("tune",), ("embed",), ("run",), ("merge",)):
        helped = retrieval_eval(*command, "--help", cwd=tmp_path)
        assert "--progress / --no-progress" in helped.stdout, command
    valued = retrieval_eval("run", "--progress=yes", cwd=tmp_path)
    assert valued.returncode == 2
    assert "--progress" in valued.stderr
