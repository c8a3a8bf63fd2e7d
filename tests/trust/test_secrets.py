"""What an edge does first: the secrets leave the environment children inherit and the
environment block the process started with, the runner is told to mask them before
anything else is printed, and everything printed afterwards is clean. Each case runs in a
process of its own, started with the secrets in its environment as the runner does."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

PROGRAM = """\
import os, subprocess, sys
from retrieval_eval.trust.secrets import protect_process
taken = protect_process(patterns=["MY_*"])
print("taken:", sorted(taken))
print("token=" + taken["GITHUB_TOKEN"])
child = subprocess.run(
    [sys.executable, "-c", "import os; print(' '.join(sorted(os.environ)))"],
    capture_output=True, text=True, check=True,
).stdout
print("child sees token:", "GITHUB_TOKEN" in child.split(), "MY_PASSWORD" in child.split())
with open("/proc/self/environ", "rb") as handle:
    block = handle.read()
print("startup block holds:", [v for v in sys.argv[1:] if v.encode() in block])
"""


def run(tmp_path: Path, token: str, password: str, *, actions: bool) -> list[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "GITHUB_TOKEN": token,
        "MY_PASSWORD": password,
        "GITHUB_ACTIONS": "true" if actions else "false",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, token, password],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_in_actions_the_masks_come_first_and_no_secret_is_left_anywhere(tmp_path: Path) -> None:
    token, password = f"ghs_{secrets.token_hex(12)}", f"pw-{secrets.token_hex(8)}"
    lines = run(tmp_path, token, password, actions=True)
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert lines[: len(masks)] == masks  # before anything else is printed
    assert {f"::add-mask::{token}", f"::add-mask::{password}"} <= set(masks)
    assert lines[len(masks) :] == [
        "taken: ['GITHUB_TOKEN', 'MY_PASSWORD']",
        "token=***",
        "child sees token: False False",
        "startup block holds: []",
    ]


def test_outside_actions_nothing_is_announced_and_the_secrets_are_still_withheld(
    tmp_path: Path,
) -> None:
    token, password = f"ghp_{secrets.token_hex(12)}", f"pw-{secrets.token_hex(8)}"
    assert run(tmp_path, token, password, actions=False) == [
        "taken: ['GITHUB_TOKEN', 'MY_PASSWORD']",
        "token=***",
        "child sees token: False False",
        "startup block holds: []",
    ]
