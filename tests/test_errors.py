"""Every input error reads ``FILE:LINE: message``, with FILE as the reader of the
repository knows it, and maps to an exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.errors import ConfigError, InputError, RetrievalEvalError, shown_path
from retrieval_eval.vocabulary import ExitCode


def test_an_error_inside_the_working_directory_names_the_file_relative_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    error = InputError("duplicate id 'q1'", file=tmp_path / "datasets" / "golden.jsonl", line=7)
    assert str(error) == "datasets/golden.jsonl:7: duplicate id 'q1'"


def test_a_file_outside_the_working_directory_is_shown_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    elsewhere = tmp_path / "there" / "corpus.jsonl"
    assert str(ConfigError("bad key", file=elsewhere, line=2)) == f"{elsewhere}:2: bad key"
    assert shown_path("relative/kept.toml") == "relative/kept.toml"


def test_without_a_line_the_file_alone_and_without_a_file_the_message_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert str(InputError("is empty", file=tmp_path / "notes.md")) == "notes.md: is empty"
    assert str(InputError("no datasets found")) == "no datasets found"


def test_a_removed_working_directory_leaves_the_path_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert str(InputError("x", file=tmp_path / "a.jsonl", line=1)) == f"{tmp_path}/a.jsonl:1: x"


def test_every_error_the_user_can_act_on_exits_2() -> None:
    assert issubclass(InputError, RetrievalEvalError)
    assert issubclass(ConfigError, RetrievalEvalError)
    assert InputError("x").exit_code == ConfigError("y").exit_code == ExitCode.ERROR == 2
