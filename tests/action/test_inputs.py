from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.action.inputs import load_action_settings
from retrieval_eval.errors import ConfigError
from tests.support.runner_env import TOKEN, runner_env


def test_defaults_as_the_runner_passes_them(tmp_path: Path) -> None:
    settings = load_action_settings(runner_env(tmp_path))
    assert settings.config is None
    assert settings.paths == ()
    # Empty inputs are "not given": the config file, else the built-in default, decides.
    assert settings.overrides == {}
    assert settings.fail_on_regression is True
    assert (settings.comment, settings.baseline_source, settings.mode) == (
        "update",
        "base",
        "evaluate",
    )
    assert settings.status_context == settings.comment_id == "retrieval-eval"
    assert settings.github_retry_seconds == 60.0
    assert settings.github_token.get_secret_value() == TOKEN
    assert settings.runner.run_url == "https://github.example/octo/notes/actions/runs/4242"


def test_inputs_are_read_with_hyphens_kept(tmp_path: Path) -> None:
    env = runner_env(tmp_path, fail_on_regression="false", status_context="eval/docs")
    env["INPUT_PATHS"] = "datasets/**\n  \n!datasets/README.md\n"
    env["INPUT_BASELINE-SOURCE"] = "workspace"
    settings = load_action_settings(env)
    assert settings.fail_on_regression is False
    assert settings.baseline_source == "workspace"
    assert settings.paths == ("datasets/**", "!datasets/README.md")
    assert settings.comment_id == "eval/docs"  # falls back to the status context


def test_every_bad_input_is_named_with_what_it_accepts_in_one_error(tmp_path: Path) -> None:
    env = runner_env(
        tmp_path,
        tolerance="five percent",
        fail_on_regression="yes",
        comment="sticky",
        baseline_source="head",
        mode="post",
        report_dir="../outside",
        github_retry_seconds="-1",
        comment_id="has space",
    )
    with pytest.raises(ConfigError) as caught:
        load_action_settings(env)
    assert str(caught.value) == (
        "the Action's inputs are not valid:\n"
        "  - input `report-dir`: accepts a path inside the repository, got '../outside'\n"
        "  - input `tolerance`: accepts a number from 0 to 1, got 'five percent'\n"
        "  - input `fail-on-regression`: accepts true | false, got 'yes'\n"
        "  - input `comment`: accepts update | new | off, got 'sticky'\n"
        "  - input `comment-id`: accepts letters, digits and . _ / - (up to 100, starting with a "
        "letter or digit), got 'has space'\n"
        "  - input `baseline-source`: accepts base | workspace, got 'head'\n"
        "  - input `mode`: accepts evaluate | publish | embed-shard | evaluate-shard | merge, "
        "got 'post'\n"
        "  - input `github-retry-seconds`: accepts a number of seconds from 0 to 3600, got '-1'"
    )


def test_missing_runner_variables_say_where_the_command_belongs(tmp_path: Path) -> None:
    env = runner_env(tmp_path)
    del env["GITHUB_EVENT_PATH"]
    with pytest.raises(
        ConfigError,
        match="GITHUB_EVENT_PATH is not set: `retrieval-eval action` "
        "runs as a step of a GitHub Actions job",
    ):
        load_action_settings(env)


def test_empty_token_is_an_error_that_does_not_echo_anything_secret(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="input `github-token`: is empty"):
        load_action_settings(runner_env(tmp_path, github_token=""))


def test_token_never_appears_in_repr_or_str(tmp_path: Path) -> None:
    settings = load_action_settings(runner_env(tmp_path))
    assert TOKEN not in repr(settings)
    assert TOKEN not in str(settings)
    assert "github_token=SecretStr('**********')" in repr(settings)


def test_the_images_model_folder_is_taken_from_the_environment(tmp_path: Path) -> None:
    env = runner_env(tmp_path)
    assert load_action_settings(env).runner.model_dir is None
    env["RETRIEVAL_EVAL_MODEL_DIR"] = "/opt/retrieval-eval/model"
    assert load_action_settings(env).runner.model_dir == Path("/opt/retrieval-eval/model")


def test_inputs_that_set_a_run_setting_become_its_overrides(tmp_path: Path) -> None:
    """Each is converted by its setting's type and bounds (the option table's declaration)."""
    env = runner_env(tmp_path, tolerance="0.2", judge="true", report_dir="out", k="")
    env["INPUT_BASELINE-UPDATE"] = "ratchet"
    settings = load_action_settings(env)
    assert settings.overrides == {
        "tolerance": 0.2,
        "judge": {"enabled": True},
        "report_dir": (tmp_path / "out").resolve(),
        "baseline_update": "ratchet",
    }
