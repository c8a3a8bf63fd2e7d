"""Fixtures for the model tests: one real `model install` per test session."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str) -> CliResult:
    """Run the installed CLI in a child process, as a user would."""
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)


@dataclass(frozen=True)
class FreshInstall:
    model_dir: Path
    result: CliResult


@pytest.fixture(scope="session")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> FreshInstall:
    """`retrieval-eval model install --dir TMP`: builds the model from the weights, from scratch."""
    model_dir = tmp_path_factory.mktemp("model") / "nested" / "onnx"
    return FreshInstall(model_dir, run_cli("model", "install", "--dir", str(model_dir)))
