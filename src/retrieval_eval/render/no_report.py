"""The comment for a run that produced no report: invalid datasets, or an error.

Every string here can come from a pull request: a dataset's file name, a
fixture's unknown key, a TOML key, a baseline's dataset name, a retriever's
error text. Each line of it goes through ``escape_markdown`` (the escaping the
report uses), one line at a time, so a newline cannot start a block, three
backticks cannot open or close a code block, HTML stays text and ``@name``
notifies no one. No code block is used: inside one, GitHub would show the
escapes literally.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.render.links import FACTORY_PACKAGES_DOCS
from retrieval_eval.vocabulary import verdict_words

MAX_PROBLEMS = 50
_LINE_CHARS = 10_000  # a line quoting a retriever's stderr is long; a comment holds 65,536
_COULD_NOT_EVALUATE = "retrieval-eval could not evaluate:"
# Python's words for a package the importing environment lacks.
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


def escaped_lines(text: object) -> list[str]:
    """One escaped Markdown line per line of ``text`` (blank lines dropped)."""
    return [
        escape_markdown(line, max_len=_LINE_CHARS)
        for line in str(text).splitlines()
        if line.strip()
    ]


def shown_path(file: object, workspace: Path | None) -> str:
    """A repository-relative path where it can be one: it is what the reader knows."""
    path = Path(str(file))
    if workspace is not None and path.is_absolute() and path.is_relative_to(workspace):
        return path.relative_to(workspace).as_posix()
    return str(file)


def no_report_markdown(
    *,
    verdict: str,
    description: str,
    problems: Sequence[object] = (),
    error: object | None = None,
    notices: Sequence[str] = (),
    workspace: Path | None = None,
) -> str:
    """Invalid datasets (their problems) or a failed run (its error), as a comment: the
    verdict, then what went wrong, then the notices of the run (they are about the baseline
    or the settings, and matter only once the run works)."""
    icon = verdict_words(verdict).icon
    lines = [f"### {icon} retrieval-eval: {escape_markdown(verdict)}", ""]
    # The status description of a failed run is its error: quoted below, said once.
    quoted = escaped_lines(error) if error is not None else []
    said = [line for line in escaped_lines(description) if not any(q in line for q in quoted)]
    lines += [*(said or [_COULD_NOT_EVALUATE]), ""]
    for problem in problems[:MAX_PROBLEMS]:
        file, line = getattr(problem, "file", None), getattr(problem, "line", None)
        where = "" if file is None else shown_path(file, workspace) + (f":{line}" if line else "")
        message = " ".join(escaped_lines(getattr(problem, "message", problem)))
        lines.append(f"- **{escape_markdown(where)}** {message}" if where else f"- {message}")
    if len(problems) > MAX_PROBLEMS:
        lines.append(f"- … and {len(problems) - MAX_PROBLEMS} more (see the job's annotations)")
    if error is not None:
        lines += ["", "\n>\n".join(f"> {line}" for line in quoted)]
        missing = missing_module(str(error))
        if missing is not None:
            lines += ["", missing_module_hint(missing)]
    if notices:
        lines += ["", *notices]
    return "\n".join(lines) + "\n"


def missing_module(text: str) -> str | None:
    """The module an import error names, when ``text`` quotes one."""
    found = _MISSING_MODULE.search(text)
    return found.group(1) if found else None


def missing_module_hint(module: str) -> str:
    """Where the fix is: the factory runs with retrieval-eval's Python, not the runner's."""
    return (
        f"`{escape_markdown(module)}` is not installed where the retriever runs: a Python factory "
        "runs with the Python that runs retrieval-eval (in the Action, the container's, which "
        "holds retrieval-eval's own packages only), so a package installed on your machine or "
        "by an earlier step is not there. "
        f"[How a factory gets its packages]({FACTORY_PACKAGES_DOCS})."
    )
