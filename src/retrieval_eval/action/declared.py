"""The Action's declared inputs and outputs, in one table.

``action.yml``, the settings parser and the README's input table must agree;
a test compares all three against this table so none of them can drift. An input that sets
a run setting is not written here: the option table declares it on the setting
(``Option(action_input=...)``), and ``setting_inputs`` makes its entry, empty by default
(empty means "not given": the runner passes every declared input, so a non-empty default
would always override the configuration file).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from retrieval_eval.config.markdown import shown_default
from retrieval_eval.config.table import rows
from retrieval_eval.settings import RunSettings
from retrieval_eval.vocabulary import ACTION_VERDICTS


@dataclass(frozen=True)
class InputSpec:
    name: str
    default: str
    description: str

    @property
    def env_name(self) -> str:
        """How the runner passes it: upper-cased, spaces to ``_``, hyphens kept."""
        return "INPUT_" + self.name.replace(" ", "_").upper()


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
    ),
    InputSpec(
        "paths",
        "",
        "Globs, one per line; `!` excludes; later lines win. On a pull request that changes no "
        "matching file the evaluation is skipped and the status is success. Empty: always "
        "evaluate.",
    ),
    InputSpec(
        "fail-on-regression",
        "true",
        "`true`: exit 1 when the gate fails (regression or threshold). `false`: report only; the "
        "status still shows failure.",
    ),
    InputSpec(
        "github-token",
        "${{ github.token }}",
        "Token for the comment and the commit status. Never logged.",
    ),
    InputSpec(
        "comment",
        "update",
        "`update`: one comment per pull request, edited in place. `new`: a new comment on every "
        "run. `off`: no comment.",
    ),
    InputSpec(
        "comment-id",
        "",
        "Identifies this evaluation's comment, so two evaluations in one repository keep separate "
        "comments. Empty: the `status-context`.",
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
    ),
    InputSpec(
        "baseline-source",
        "base",
        "`base`: read the baseline from the pull request's base commit, so a PR cannot loosen its "
        "own gate. `workspace`: use the checked-out file.",
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
    ),
    InputSpec(
        "github-retry-seconds",
        "60",
        "Longest total time the run may wait between retries of GitHub API calls (5xx, 429, "
        "secondary rate limit). 0: no retries.",
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
)
