"""``retrieval-eval action``: the container's entry point on a GitHub runner.

This is the edge that reads the environment; everything below it gets values
passed in.
"""

from __future__ import annotations

import os

import click

from retrieval_eval.vocabulary import ExitCode


@click.command(name="action")
def action() -> ExitCode:
    """Run as a GitHub Action step: inputs come from INPUT_* and GITHUB_* variables."""
    from retrieval_eval.action.main import run_action

    return run_action(dict(os.environ))
