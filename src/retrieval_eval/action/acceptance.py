"""A maintainer accepts a pull request's regression by labelling it, and nobody else can.

The label (input ``accept-label``) is only a request: the run asks GitHub, every time,
who added it (the issue events API: the last ``labeled`` event for it, with no
``unlabeled`` after) and what that account may do on the repository (the collaborator
permission endpoint). Only ``admin`` or ``write`` accepts; a pull request's author
who cannot write adds the label to no effect. A fork's ``pull_request`` run has a
read-only token and hands its results over to ``mode: publish``: a label changes
nothing there. Acceptance changes the verdict of this pull request only: the baseline
moves after the merge only through the baseline workflow.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from retrieval_eval.action.evaluation import Evaluated
from retrieval_eval.action.event import PullRequestActivity
from retrieval_eval.action.github_api import GitHubApi, GitHubApiError
from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.vocabulary import VERDICT_ICON, ExitCode, fit_status_description

# What a label can accept: a measured regression. An invalid dataset or an error is not a
# decision about quality, and stays what it is.
ACCEPTABLE = frozenset({"regression", "threshold"})
WRITERS = frozenset({"admin", "write"})


@dataclass(frozen=True)
class Acceptance:
    by: str  # the login that added the label
    label: str


@dataclass(frozen=True)
class Refusal:
    """The label is there, and does not accept: why, for the log."""

    reason: str


def check_acceptance(
    api: GitHubApi, pull: PullRequestActivity, label: str
) -> Acceptance | Refusal | None:
    """None: no accepting label on the pull request (nothing to say)."""
    if not label or label not in pull.labels:
        return None
    if pull.token_is_read_only:
        return Refusal(
            f"the label {label!r} is ignored on a fork's pull_request run: its read-only "
            "token cannot check who added it"
        )
    try:
        events = api.label_events(pull.number)
        added_by = None
        for event in events:
            if event.label == label:
                added_by = event.actor if event.event == "labeled" else None
        if added_by is None:
            return Refusal(f"the label {label!r} is no longer on the pull request")
        permission = api.permission(added_by)
    except GitHubApiError as error:
        return Refusal(f"the label {label!r} could not be checked: {error}")
    if permission not in WRITERS:
        return Refusal(
            f"the label {label!r} was added by {added_by}, whose permission on the repository "
            f"is {permission!r}: only write or admin accepts a regression"
        )
    return Acceptance(by=added_by, label=label)


def accepted(result: Evaluated, acceptance: Acceptance) -> Evaluated:
    """The regression as accepted: verdict ``accepted``, exit 0, a success status saying
    who accepted it, and a line above the report."""
    who = escape_markdown(f"@{acceptance.by}")
    banner = (
        f"### {VERDICT_ICON['accepted']} retrieval-eval: accepted by {who}\n\n"
        f"{who} accepted this {escape_markdown(result.verdict)} with the label "
        f"{escape_markdown(acceptance.label)}: it does not block merging. The baseline stays "
        "as it is until the baseline workflow updates it after the merge.\n\n"
    )
    return replace(
        result,
        verdict="accepted",
        exit_code=ExitCode.OK,
        comment_markdown=banner + result.comment_markdown,
        status_description=fit_status_description(
            f"accepted by {acceptance.by}: {result.status_description}"
        ),
    )


def acceptance_summary(result: Evaluated, acceptance: Acceptance) -> str:
    """The job summary's line (the report above it says what was accepted)."""
    return (
        f"### {VERDICT_ICON['accepted']} accepted by {escape_markdown(acceptance.by)} "
        f"(label {escape_markdown(acceptance.label)})\n"
    )
