"""`--progress/--no-progress`, shared by the commands with slow steps.

Apart from `run`'s own module, so a command that needs only the flag (`beir`, `tune`)
does not import the whole run (the gate, the report's models and templates).
"""

from __future__ import annotations

import os
import sys

import click

progress_option = click.option(
    "--progress/--no-progress",
    default=None,
    help="A progress bar (--progress) or a line every few seconds (--no-progress) "
    "for each step longer than a second. Default: the bar on a terminal, lines in CI.",
)


def show_progress(choice: bool | None) -> bool:
    if choice is not None:
        return choice
    return sys.stderr.isatty() and not os.environ.get("CI")
