"""The Action's declared inputs and outputs, in one table.

Each input the Action reads for itself is one ``InputSpec``: its name, the default
``action.yml`` gives it, its description, how its text is converted (``parse``) and whether
it is a secret. ``action.yml``'s inputs and outputs and the README's input table are written
from this table (``action_yml_inputs``, ``input_table``), ``inputs.load_action_settings``
converts by it, and a test checks every secret is withheld from the retriever; a new
input is one entry here plus its field on ``ActionSettings``.

An input that sets a run setting is not written here: the option table declares it on the
setting (``Option(action_input=...)``), and ``setting_inputs`` makes its entry, empty by
default (empty means "not given": the runner passes every declared input, so a non-empty
default would always override the configuration file).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, SecretStr

from retrieval_eval.config.markdown import shown_default
from retrieval_eval.config.table import rows
from retrieval_eval.settings import RunSettings
from retrieval_eval.vocabulary import ACTION_VERDICTS

# Converts an input's text (stripped) into its value, given the workspace its paths are
# inside; raises ``ValueError`` saying what the input accepts.
Parser = Callable[[str, Path], Any]

Mode = Literal["evaluate", "publish", "embed-shard", "evaluate-shard", "merge"]
MODES: tuple[str, ...] = get_args(Mode)

_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")


def text(value: str, workspace: Path) -> str:
    """The text as given."""
    return value


def choice(*allowed: str) -> Parser:
    def convert(value: str, workspace: Path) -> str:
        if value not in allowed:
            raise ValueError(f"accepts {' | '.join(allowed)}, got {value!r}")
        return value

    return convert


def boolean(value: str, workspace: Path) -> bool:
    if value.lower() in {"true", "false"}:
        return value.lower() == "true"
    raise ValueError(f"accepts true | false, got {value!r}")


def seconds(value: str, workspace: Path) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"accepts a number of seconds from 0 to 3600, got {value!r}") from None
    if not 0.0 <= number <= 3600.0:
        raise ValueError(f"accepts a number of seconds from 0 to 3600, got {value!r}")
    return number


def identifier(value: str, workspace: Path) -> str:
    if not _ID_PATTERN.fullmatch(value):
        raise ValueError(
            "accepts letters, digits and . _ / - (up to 100, starting with a letter or digit), "
            f"got {value!r}"
        )
    return value


def optional_identifier(value: str, workspace: Path) -> str:
    """Empty is "not given" (``comment-id`` then takes the status context)."""
    return identifier(value, workspace) if value else ""


def globs(value: str, workspace: Path) -> tuple[str, ...]:
    patterns = tuple(line.strip() for line in value.splitlines() if line.strip())
    for pattern in patterns:
        if pattern.removeprefix("!") == "":
            raise ValueError("accepts globs one per line, `!glob` to exclude; got a bare `!`")
    return patterns


def in_workspace(value: str, workspace: Path) -> Path:
    """Paths must stay inside the workspace: only it is mounted into the container.

    The path keeps the name the workflow gives it (symlinks are not followed): the base
    commit's `baseline` and `config` are read by that name, which a symlink the pull request
    adds must not change. Where it points must be inside the workspace too.
    """
    if not value:
        raise ValueError("accepts a path inside the repository, got an empty value")
    root = workspace.resolve()
    named = Path(os.path.normpath(root / value))
    if not (named.is_relative_to(root) and named.resolve().is_relative_to(root)):
        raise ValueError(f"accepts a path inside the repository, got {value!r}")
    return named


def optional_path(value: str, workspace: Path) -> Path | None:
    """Empty means "not given": the config file or the tool's default decides."""
    return in_workspace(value, workspace) if value else None


def token(value: str, workspace: Path) -> SecretStr:
    if not value:
        raise ValueError("is empty; the default `${{ github.token }}` is what most workflows need")
    # GitHub tokens are printable ASCII; anything else cannot go into an HTTP header. The
    # message names the position only: quoting the character would show part of the secret.
    for position, character in enumerate(value, start=1):
        if not (character.isascii() and character.isprintable()) or character.isspace():
            raise ValueError(
                f"has a character no GitHub token contains (at position {position}); "
                "check the secret's value (a stray paste, a smart quote, a line break)"
            )
    return SecretStr(value)


@dataclass(frozen=True)
class InputSpec:
    name: str
    default: str
    description: str
    parse: Parser = text
    secret: bool = False  # withheld from every child process (trust/child_env.py)

    @property
    def env_name(self) -> str:
        """How the runner passes it: upper-cased, spaces to ``_``, hyphens kept."""
        return "INPUT_" + self.name.replace(" ", "_").upper()

    @property
    def env_names(self) -> tuple[str, str]:
        """Both spellings a runner may use (older runners turned ``-`` into ``_``)."""
        return (self.env_name, self.env_name.replace("-", "_"))

    @property
    def attribute(self) -> str:
        """Its field on ``ActionSettings``."""
        return self.name.replace("-", "_")


def setting_inputs(model: type[BaseModel] = RunSettings) -> tuple[InputSpec, ...]:
    """One input per setting the option table gives an Action input, in the table's order."""
    return tuple(
        InputSpec(
            row.action_input,
            "",
            " ".join(
                part
                for part in (
                    row.doc,
                    row.action_doc,
                    f"Empty: from the config file (`{row.key}`), else "
                    f"{shown_default(row.default)}.",
                )
                if part
            ),
        )
        for row in rows(model)
        if row.action_input is not None
    )


# The Action's own inputs: how it runs, talks to GitHub and decides what to evaluate.
OWN_INPUTS: tuple[InputSpec, ...] = (
    InputSpec(
        "config",
        "",
        "Configuration file. Empty: `retrieval-eval.toml`, else `[tool.retrieval-eval]` in "
        "`pyproject.toml`.",
        optional_path,
    ),
    InputSpec(
        "paths",
        "",
        "Globs, one per line; `!` excludes; later lines win. On a pull request that changes no "
        "matching file the evaluation is skipped and the status is success. Empty: always "
        "evaluate.",
        globs,
    ),
    InputSpec(
        "fail-on-regression",
        "true",
        "`true`: exit 1 when the gate fails (regression or threshold). `false`: report only; the "
        "status still shows failure.",
        boolean,
    ),
    InputSpec(
        "github-token",
        "${{ github.token }}",
        "Token for the comment and the commit status. Never logged.",
        token,
        secret=True,
    ),
    InputSpec(
        "comment",
        "update",
        "`update`: one comment per pull request, edited in place. `new`: a new comment on every "
        "run. `off`: no comment.",
        choice("update", "new", "off"),
    ),
    InputSpec(
        "comment-id",
        "",
        "Identifies this evaluation's comment, so two evaluations in one repository keep separate "
        "comments. Empty: the `status-context`.",
        optional_identifier,
    ),
    InputSpec(
        "accept-label",
        "retrieval-eval: accept",
        "A label that accepts a pull request's regression: added by someone with write access "
        "(checked through the API on every run) on the head it accepts, the verdict becomes "
        "`accepted` and the status success; after the merge the baseline workflow records it, "
        "and with `baseline-update: ratchet` takes its values as the baseline. Add `labeled` to "
        "the workflow's `pull_request` types so adding it re-runs the check. Empty: no "
        "regression can be accepted.",
    ),
    InputSpec(
        "status-context",
        "retrieval-eval",
        "Name of the commit status (the check a branch protection rule can require).",
        identifier,
    ),
    InputSpec(
        "baseline-source",
        "base",
        "`base`: read the baseline from the pull request's base commit, so a PR cannot loosen its "
        "own gate. `workspace`: use the checked-out file.",
        choice("base", "workspace"),
    ),
    InputSpec(
        "mode",
        "evaluate",
        "`evaluate`: run the evaluation. `publish`: post the comment and status a fork pull "
        "request's run left in `report-dir` (use in a `workflow_run` workflow). For a matrix "
        "(docs/action.md#sharding-across-a-matrix): `embed-shard` embeds shard `shard` of the "
        "corpus into `cache-dir`, `evaluate-shard` evaluates shard `shard` of the queries into "
        "`report-dir`, `merge` combines the shards in `shard-artifacts`, gates once and posts "
        "the comment and status.",
        choice(*MODES),
    ),
    InputSpec(
        "shard",
        "",
        "`I/N`: this job's shard, for `mode: embed-shard` and `mode: evaluate-shard` (e.g. `2/4`).",
    ),
    InputSpec(
        "shard-artifacts",
        "",
        "Folder where `actions/download-artifact` put the shard jobs' artifacts, one subfolder "
        "each: embedding caches for `evaluate-shard` (merged into `cache-dir` first; optional), "
        "partial results for `merge` (required).",
        optional_path,
    ),
    InputSpec(
        "github-retry-seconds",
        "60",
        "Longest total time the run may wait between retries of GitHub API calls (5xx, 429, "
        "secondary rate limit). 0: no retries.",
        seconds,
    ),
)


INPUTS: tuple[InputSpec, ...] = (*setting_inputs(), *OWN_INPUTS)


def _verdict_list() -> str:
    names = [
        f"`{verdict}`" + (" (datasets failed validation)" if verdict == "invalid" else "")
        for verdict in ACTION_VERDICTS
    ]
    return f"{', '.join(names[:-1])} or {names[-1]}."


@dataclass(frozen=True)
class OutputSpec:
    name: str
    description: str


OUTPUTS: tuple[OutputSpec, ...] = (
    OutputSpec(
        "verdict",
        _verdict_list(),
    ),
    OutputSpec("report-json", "Path of `report.json` (empty when nothing was evaluated)."),
    OutputSpec("report-markdown", "Path of `report.md` (empty when nothing was evaluated)."),
    OutputSpec("report-html", "Path of `report.html` (empty when nothing was evaluated)."),
    OutputSpec("comment-url", "URL of the pull request comment written (empty when none was)."),
    OutputSpec("metrics", "Compact JSON: dataset file -> metric -> current value."),
    OutputSpec(
        "commit-files",
        "Files a push run changed for a following step to commit, one a line, as paths in "
        "the repository: the baseline, the history and its badge, and with `[judged] enabled` "
        "the judged tier's judgments. Empty on a pull request.",
    ),
)


def action_yml_inputs(
    inputs: Iterable[InputSpec] = INPUTS, outputs: Iterable[OutputSpec] = OUTPUTS
) -> str:
    """action.yml's ``inputs:`` and ``outputs:`` blocks, as written there."""
    lines = ["inputs:"]
    for spec in inputs:
        lines += [
            f"  {spec.name}:",
            f"    description: {_yaml_text(spec.description)}",
            "    required: false",
            f"    default: {_yaml_text(spec.default)}",
        ]
    lines += ["", "outputs:"]
    for output in outputs:
        lines += [f"  {output.name}:", f"    description: {_yaml_text(output.description)}"]
    return "\n".join(lines)


def with_action_yml_inputs(action_yml: str, blocks: str) -> str:
    """action.yml's text with its inputs and outputs replaced by ``blocks``."""
    head, rest = action_yml.split("\ninputs:\n", 1)
    _, tail = rest.split("\n\nruns:\n", 1)
    return f"{head}\n{blocks}\n\nruns:\n{tail}"


def _yaml_text(value: str) -> str:
    """A single-quoted YAML scalar (a quote is doubled)."""
    return "'" + value.replace("'", "''") + "'"


# The markers the README's input table sits between.
INPUT_TABLE_MARKERS = ("<!-- action-inputs:start -->", "<!-- action-inputs:end -->")


def input_table(inputs: Iterable[InputSpec] = INPUTS) -> str:
    """The README's table of inputs."""
    lines = ["| input | default | what it does |", "| --- | --- | --- |"]
    for spec in inputs:
        default = f"`{spec.default}`" if spec.default else "(empty)"
        lines.append(f"| `{spec.name}` | {default} | {spec.description} |")
    return "\n".join(lines)
