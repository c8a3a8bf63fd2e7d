"""``retrieval-eval action``: the container's entry point on a GitHub runner.

This is the edge that reads the environment; everything below it gets values
passed in.
"""

from __future__ import annotations

import os

import click

from retrieval_eval.vocabulary import ExitCode


@click.command(name="action")
@click.pass_obj
def action(withheld: dict[str, str] | None) -> ExitCode:
    """Run as a GitHub Action step: inputs come from INPUT_* and GITHUB_* variables."""
    from retrieval_eval.action.main import run_action
    from retrieval_eval.trust.signals import stop_on_signals

    stop_on_signals()  # a cancelled job still ends with a status
    # The token was taken out of the environment children inherit; the Action still needs it.
    return run_action({**os.environ, **(withheld or {})})
