"""The run plan: what this job evaluates with, built once for every mode.

``ActionSettings`` is what the inputs say. The plan adds what the configuration says,
through the one preparation every edge uses (``retrieval_eval.prepare``): on a pull
request the base commit's configuration is read first, its ``secret_env`` is withheld
together with the pull request's before anything the pull request configures is
resolved, and the gate and trust settings are the base commit's. An invalid configuration
is kept, not raised: it becomes the run's ``error`` verdict only if the run evaluates (a
pull request outside ``paths`` skips).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.action.base_config import (
    BaseInfo,
    adoption_notice,
    base_commit,
    proposal_notice,
)
from retrieval_eval.action.event import Activity, CommitActivity, PullRequestActivity
from retrieval_eval.action.github_api import GitHubApi
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.prepare import Prepared, prepare, withhold
from retrieval_eval.render.links import ReportLinks
from retrieval_eval.settings import RunSettings


@dataclass(frozen=True)
class RunPlan:
    settings: RunSettings | None  # None: ``config_error`` says why
    config_error: RetrievalEvalError | None
    report_dir: Path  # where the reports go, known even when the configuration is not valid
    notices: tuple[str, ...] = ()  # for the top of the comment (escaped)
    gate_origin: str | None = None  # where the gate's settings came from, on a pull request
    adoption: bool = False  # the pull request that adds retrieval-eval to the repository
    links: ReportLinks | None = None  # the run and the evaluated fixtures on GitHub

    def require(self) -> RunSettings:
        if self.config_error is not None:
            raise self.config_error
        assert self.settings is not None
        return self.settings


def build_plan(
    settings: ActionSettings,
    activity: Activity,
    api: GitHubApi,
    commands: RunnerFiles,
    *,
    scratch: Path,
) -> RunPlan:
    """Built once, before the activity runs; ``scratch`` holds the base commit's files."""
    runner = settings.runner
    overrides = settings.overrides  # the inputs the option table maps onto run settings
    default_report_dir = (
        overrides.get("report_dir")
        or (runner.workspace / RunSettings.model_fields["report_dir"].default).resolve()
    )
    base: BaseInfo | None = None
    with commands.group("Configuration"):
        try:
            if isinstance(activity, PullRequestActivity):
                base = base_commit(settings, activity, api, overrides=overrides, scratch=scratch)
            adoption = base is not None and base.adoption
            if adoption:
                commands.info(
                    "This pull request adds retrieval-eval (its base commit has no "
                    "configuration and no baseline): it is evaluated with its own settings, "
                    "thresholds included, and establishes the baseline."
                )
            elif base is not None:
                commands.info(f"The gate and trust settings come from {base.origin}.")
            ready = prepare(
                workdir=runner.workspace,
                config_file=settings.config,
                overrides=overrides,
                overrides_source="Action inputs",
                base=base.commit if base is not None else None,
                gate_from_base=settings.baseline_source == "base" and not adoption,
            )
        except RetrievalEvalError as error:
            withhold()  # the runner's credentials, whatever else failed
            return RunPlan(None, error, default_report_dir)
        run = _without_unreachable_judge(ready, settings, activity, commands)
        commands.info(run.model_dump_json(indent=2))
    notices: list[str] = []
    if adoption:
        notices.append(adoption_notice())
    elif (notice := proposal_notice(ready)) is not None:
        notices.append(notice)
        commands.warning(
            "This pull request changes settings a pull request's run takes from its base "
            "commit (the verdict, what its code may reach, its bounds); they take effect after "
            "merge: " + "; ".join(f"{b} → {a}" for b, a in ready.proposed),
            title="gate settings changed",
        )
    return RunPlan(
        settings=run,
        config_error=None,
        report_dir=run.report_dir,
        notices=tuple(notices),
        gate_origin=ready.gate_origin,
        adoption=adoption,
        links=report_links(settings, activity, run),
    )


def report_links(
    settings: ActionSettings, activity: Activity, run: RunSettings
) -> ReportLinks | None:
    """Where the report links: this workflow run, and the fixtures at the commit evaluated
    (a pull request's head, in the repository it comes from, a fork's included)."""
    runner = settings.runner
    if isinstance(activity, PullRequestActivity):
        repository, sha = activity.head_repository, activity.head_sha
    elif isinstance(activity, CommitActivity):
        repository, sha = runner.repository, activity.sha
    else:
        return None
    workspace = runner.workspace.resolve()
    datasets = run.datasets.resolve()
    if not datasets.is_relative_to(workspace):
        return None  # a datasets folder outside the repository has no page on GitHub
    folder = datasets.relative_to(workspace)
    return ReportLinks.for_commit(
        server_url=runner.server_url,
        repository=repository,
        sha=sha,
        run_id=runner.run_id,
        datasets_path="" if folder == Path() else folder.as_posix(),
    )


def _without_unreachable_judge(
    ready: Prepared, settings: ActionSettings, activity: Activity, commands: RunnerFiles
) -> RunSettings:
    """A fork's pull_request run gets no secrets: a missing key there is expected, not an error."""
    run = ready.settings
    fork_without_key = (
        settings.runner.anthropic_api_key is None
        and isinstance(activity, PullRequestActivity)
        and activity.token_is_read_only
    )
    if not (run.judge.enabled and fork_without_key):
        return run
    commands.warning(
        "the LLM judge is skipped: this fork pull request's run gets no secrets, "
        "so ANTHROPIC_API_KEY is not set"
    )
    return run.model_copy(update={"judge": run.judge.model_copy(update={"enabled": False})})
