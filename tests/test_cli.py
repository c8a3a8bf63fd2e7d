"""The `retrieval-eval` entry point: a mistyped command or config key gets a suggestion,
and every problem of a config file is listed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import ConfigError
from retrieval_eval.settings import RunSettings, read_settings
from tests.author.cli import retrieval_eval


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [("genrate", "'generate'"), ("valdate", "'validate' or 'label'"), ("revew", "'review'")],
)
def test_a_mistyped_command_gets_did_you_mean(tmp_path: Path, typed: str, suggested: str) -> None:
    result = retrieval_eval(typed, cwd=tmp_path)
    assert result.returncode == 2
    assert f"No such command '{typed}'. Did you mean {suggested}?" in result.stderr


def test_a_command_like_nothing_gets_no_guess(tmp_path: Path) -> None:
    result = retrieval_eval("xyzzy", cwd=tmp_path)
    assert result.returncode == 2
    assert "No such command 'xyzzy'." in result.stderr
    assert "Did you mean" not in result.stderr


def test_every_problem_of_a_config_file_is_listed_with_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "retrieval-eval.toml").write_text(
        'tolerence = 0.1\nk = "x"\n'
        '[retrievers.dense]\nmodle_dir = "m"\n'
        '[thresholds]\n"mrr@10" = { mni = 0.5 }\n'
        "[judge]\nenabeld = true\n"
    )

    result = retrieval_eval("run", cwd=tmp_path)

    assert result.returncode == 2
    lines = result.stderr.removeprefix("error: ").splitlines()
    assert sorted(lines) == sorted(
        [
            "retrieval-eval.toml:2: bad value for 'k': Input should be a valid integer, "
            "unable to parse string as an integer",
            "retrieval-eval.toml:1: unknown key 'tolerence'; did you mean 'tolerance'?",
            "retrieval-eval.toml:4: unknown key 'retrievers.dense.modle_dir'; "
            "did you mean 'model_dir'?",
            "retrieval-eval.toml:6: unknown key 'thresholds.\"mrr@10\".mni'; did you mean 'min'?",
            "retrieval-eval.toml:8: unknown key 'judge.enabeld'; did you mean 'enabled'?",
        ]
    )
    assert "more problem" not in result.stderr


_KNOWN = set(RunSettings.model_fields)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.from_regex(r"[a-z][a-z_]{2,12}", fullmatch=True).filter(lambda k: k not in _KNOWN),
        min_size=1,
        max_size=6,
        unique=True,
    )
)
def test_each_unknown_key_is_its_own_line(keys: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "retrieval-eval.toml").write_text("".join(f"{k} = 1\n" for k in keys))
        with pytest.raises(ConfigError) as raised:
            read_settings(workdir=root, config_file=None, overrides={})
    lines = str(raised.value).splitlines()
    assert len(lines) == len(keys)
    for number, key in enumerate(keys, 1):
        assert (
            sum(f"retrieval-eval.toml:{number}: unknown key '{key}'" in line for line in lines) == 1
        )
