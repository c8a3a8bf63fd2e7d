"""A maintainer accepts a pull request's regression by labelling it, and nobody else can.

The label (input ``accept-label``) is only a request: the run asks GitHub, every time,
who added it (the issue events API: the last ``labeled`` event for it, with no
``unlabeled`` after) and what that account may do on the repository (the collaborator
permission endpoint). Only ``admin`` or ``write`` accepts; a pull request's author
who cannot write adds the label to no effect. A fork's ``pull_request`` run has a
read-only token and hands its results over to ``mode: publish``: a label changes
nothing there.

A label accepts the commit it was added on, never a later push. Only GitHub's clock says
when, never a commit's date (its author writes that): the label accepts when this run is the
``labeled`` event that added it (the payload's head is the head it was added on), when it
was added no earlier than the first status of ``status-context`` on the head (a status on a
commit exists only once the commit was pushed, so a label added after it was added for it),
or when a run that accepted it on the head said so in a status set after it.

After the merge, the push to the default branch asks which pull request brought its commit
and checks that pull request's label by the same rule, on its last head: the baseline
workflow then records the acceptance in the history, and with ``baseline-update: ratchet``
sets the baseline to the accepted values. Nothing else moves a baseline down.
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
    pull_request: int | None = None  # on a push run: the merged pull request it was on


@dataclass(frozen=True)
class Refusal:
    """The label is there, and does not accept: why, for the log."""

    reason: str


def check_acceptance(
    api: GitHubApi, pull: PullRequestActivity, label: str, context: str
) -> Acceptance | Refusal | None:
    """None: no accepting label on the pull request (nothing to say)."""
    if not label or label not in pull.labels:
        return None
    if pull.token_is_read_only:
        return Refusal(
            f"the label {label!r} is ignored on a fork's pull_request run: its read-only "
            "token cannot check who added it"
        )
    found = _check_label(
        api,
        number=pull.number,
        head_sha=pull.head_sha,
        label=label,
        context=context,
        added_by_this_event=pull.labeled == label,
    )
    if isinstance(found, _Stale):
        return Refusal(
            f"{found.reason}. Remove the label and add it again to accept {pull.head_sha[:7]}"
        )
    return found


def check_merged_acceptance(
    api: GitHubApi, sha: str, label: str, context: str
) -> Acceptance | Refusal | None:
    """Whether the pull request merged as ``sha`` had its regression accepted, by the rule a
    pull request run applies, on its last head. None: no merged pull request with the label."""
    if not label:
        return None
    try:
        pulls = api.merged_pulls(sha)
    except GitHubApiError as error:
        return Refusal(
            f"which pull request brought {sha[:7]} could not be read, so no acceptance "
            f"label could be checked: {error}"
        )
    refusal: Refusal | None = None
    for pull in pulls:
        if label not in pull.labels:
            continue
        found = _check_label(
            api,
            number=pull.number,
            head_sha=pull.head_sha,
            label=label,
            context=context,
            added_by_this_event=False,
        )
        if isinstance(found, Acceptance):
            return replace(found, pull_request=pull.number)
        refusal = Refusal(f"#{pull.number}: {found.reason}")
    return refusal


@dataclass(frozen=True)
class _Stale(Refusal):
    """The label was added before the head was pushed."""


def _check_label(
    api: GitHubApi,
    *,
    number: int,
    head_sha: str,
    label: str,
    context: str,
    added_by_this_event: bool,
) -> Acceptance | Refusal:
    try:
        last = None
        for event in api.label_events(number):
            if event.label == label:
                last = event if event.event == "labeled" else None
        if last is None:
            return Refusal(f"the label {label!r} is no longer on the pull request")
        permission = api.permission(last.actor)
        if permission not in WRITERS:
            return Refusal(
                f"the label {label!r} was added by {last.actor}, whose permission on the "
                f"repository is {permission!r}: only write or admin accepts a regression"
            )
        if added_by_this_event:
            return Acceptance(by=last.actor, label=label)
        statuses = api.statuses(head_sha, context)
    except GitHubApiError as error:
        return Refusal(f"the label {label!r} could not be checked: {error}")
    added_on_this_head = bool(statuses) and statuses[0].created_at <= last.created_at
    # A run that accepted this label on this head set its status after the label: the label
    # was added on this head (that run saw it there), even when no status on it is older
    # (a pull request opened with the label, accepted by the label's own `labeled` run).
    accepted_here = any(
        status.created_at >= last.created_at
        and status.state == "success"
        and status.description.startswith(_accepted_by(last.actor, None))
        for status in statuses
    )
    if not (added_on_this_head or accepted_here):
        return _Stale(
            f"the label {label!r} was added by {last.actor}, and a push came after it (no "
            f"{context!r} status on {head_sha[:7]} is older than the label): a label accepts "
            "the commit it was added on, not a later one"
        )
    return Acceptance(by=last.actor, label=label)


def accepted(result: Evaluated, acceptance: Acceptance) -> Evaluated:
    """The regression as accepted: verdict ``accepted``, exit 0, a success status saying
    who accepted it, and a line above the report."""
    who = escape_markdown(f"@{acceptance.by}")
    if acceptance.pull_request is None:
        what = (
            f"{who} accepted this {escape_markdown(result.verdict)} with the label "
            f"{escape_markdown(acceptance.label)}: it does not block merging. The baseline "
            "stays as it is until the baseline workflow updates it after the merge."
        )
    else:
        what = (
            f"{who} accepted this {escape_markdown(result.verdict)} on "
            f"#{acceptance.pull_request}, merged as this commit, with the label "
            f"{escape_markdown(acceptance.label)}."
        )
    banner = f"### {VERDICT_ICON['accepted']} retrieval-eval: accepted by {who}\n\n{what}\n\n"
    return replace(
        result,
        verdict="accepted",
        exit_code=ExitCode.OK,
        comment_markdown=banner + result.comment_markdown,
        status_description=fit_status_description(
            _accepted_by(acceptance.by, acceptance.pull_request) + result.status_description
        ),
    )


def _accepted_by(login: str, pull_request: int | None) -> str:
    """How an accepted status's description begins: on a pull request's head, a later run
    reads it as that run's acceptance."""
    where = "" if pull_request is None else f" on #{pull_request}"
    return f"accepted by {login}{where}: "


def acceptance_summary(result: Evaluated, acceptance: Acceptance) -> str:
    """The job summary's line (the report above it says what was accepted)."""
    where = "" if acceptance.pull_request is None else f" on #{acceptance.pull_request}"
    return (
        f"### {VERDICT_ICON['accepted']} accepted by {escape_markdown(acceptance.by)}{where} "
        f"(label {escape_markdown(acceptance.label)})\n"
    )
