"""The environment a child process gets: ours, less the runner's credentials, its file
commands and whatever names the user lists; what is taken out is masked everywhere."""

from __future__ import annotations

import secrets
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.trust.child_env import (
    RUNNER_PATHS,
    child_env,
    is_withheld,
    withhold_secrets,
)
from retrieval_eval.trust.redaction import clean

RUNNER = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/github/home",
    "GITHUB_WORKSPACE": "/github/workspace",
    "INPUT_GITHUB-TOKEN": "ghs_input_token_0123",
    "GITHUB_TOKEN": "ghs_env_token_0123",
    "ACTIONS_RUNTIME_TOKEN": "runtime_token_0123",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.example/?aud=x",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc_token_0123",
    "GITHUB_ENV": "/home/runner/_temp/_runner_file_commands/set_env_1",
    "GITHUB_OUTPUT": "/home/runner/_temp/_runner_file_commands/set_output_1",
    "RUNNER_TEMP": "/home/runner/_temp",
    "MY_DB_PASSWORD": "hunter2-hunter2",
    "MY_DB_HOST": "db.internal",
}


def test_a_child_keeps_the_ordinary_variables_and_loses_credentials_and_file_commands() -> None:
    assert child_env(RUNNER) == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/github/home",
        "GITHUB_WORKSPACE": "/github/workspace",
        "MY_DB_PASSWORD": "hunter2-hunter2",
        "MY_DB_HOST": "db.internal",
    }


def test_the_names_the_user_lists_are_withheld_too() -> None:
    assert set(child_env(RUNNER, ["MY_*_PASSWORD"])) == {
        "PATH",
        "HOME",
        "GITHUB_WORKSPACE",
        "MY_DB_HOST",
    }
    assert not is_withheld("my_db_password", ["MY_*_PASSWORD"])  # patterns match case


def test_a_child_started_after_withholding_sees_none_of_it() -> None:
    token = f"ghs_{secrets.token_hex(10)}"
    environ = {**RUNNER, "GITHUB_TOKEN": token, "ANTHROPIC_API_KEY": f"sk-{secrets.token_hex(8)}"}
    taken = withhold_secrets(environ, ["MY_*_PASSWORD"])

    shown = subprocess.run(
        [sys.executable, "-c", "import os; print(sorted(os.environ))"],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "GITHUB_TOKEN" not in shown and "MY_DB_PASSWORD" not in shown
    assert "RUNNER_TEMP" not in shown and "GITHUB_ENV" not in shown
    assert "ANTHROPIC_API_KEY" in shown  # a retriever may call Claude too
    assert taken["GITHUB_TOKEN"] == token and taken["RUNNER_TEMP"] == "/home/runner/_temp"
    # Every secret taken out, and the key passed on, is masked in what is written.
    assert clean(f"{token} {environ['ANTHROPIC_API_KEY']} hunter2-hunter2") == "*** *** ***"
    # The runner's paths are not secrets: a log may name them.
    assert clean(RUNNER["RUNNER_TEMP"]) == RUNNER["RUNNER_TEMP"]


@given(st.dictionaries(st.text(min_size=1, max_size=30), st.text(max_size=10), max_size=20))
def test_a_child_environment_never_holds_a_withheld_name(environ: dict[str, str]) -> None:
    kept = child_env({**environ, **dict.fromkeys(RUNNER_PATHS, "/x")}, ["SECRET_*"])
    assert not any(name.startswith("SECRET_") for name in kept)
    assert not set(RUNNER_PATHS) & set(kept)
    assert not any(name.startswith("ACTIONS_ID_TOKEN_REQUEST_") for name in kept)
    assert {n: v for n, v in environ.items() if not is_withheld(n, ["SECRET_*"])} == kept
