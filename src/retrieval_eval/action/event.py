"""Turn the triggering event into one explicit activity, before any work starts.

Deciding "what are we doing" up front keeps every later step free of
``if event_name == ...`` checks, and makes an unsupported trigger a clear
error instead of a half-done run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_eval.errors import ConfigError

PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})
COMMIT_EVENTS = frozenset({"push", "workflow_dispatch", "schedule", "merge_group"})
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class PullRequestActivity:
    """Evaluate a pull request: gate against its base, comment, status on its head commit."""

    number: int
    head_sha: str  # the status goes here; GITHUB_SHA is the merge commit GitHub made
    base_sha: str
    head_repository: str
    base_repository: str
    changed_files_count: int | None
    event_name: str = "pull_request"
    merge_commit_sha: str | None = None  # the test merge GitHub made, when the payload has it
    # The labels on the pull request when the event fired (`labeled` fires with the new one
    # among them); whether one is still there, and who added it, is asked of the API.
    labels: tuple[str, ...] = ()
    # The label this run's `labeled` event added (None for any other event): the payload's
    # head is the commit it was added on, a server-side fact a later push cannot change.
    labeled: str | None = None

    @property
    def is_fork(self) -> bool:
        return self.head_repository.lower() != self.base_repository.lower()

    @property
    def token_is_read_only(self) -> bool:
        """A fork's ``pull_request`` run can neither comment nor set a status.

        ``pull_request_target`` runs in the base repository's context with its token, so it
        can publish directly, even for a fork.
        """
        return self.is_fork and self.event_name == "pull_request"


@dataclass(frozen=True)
class CommitActivity:
    """Evaluate a commit (push, manual run): status on it, baseline left in the workspace."""

    sha: str
    event_name: str
    # A push to the repository's default branch: the run is recorded in the history.
    default_branch_push: bool = False


@dataclass(frozen=True)
class PublishActivity:
    """Post what a fork pull request's unprivileged run left behind (``workflow_run``)."""

    # The commit the triggering run evaluated, from GitHub's payload: the only say on which
    # commit the results are for, since the fork wrote every file this job reads.
    triggering_head_sha: str


Activity = PullRequestActivity | CommitActivity | PublishActivity


def read_event(event_path: Path) -> dict[str, Any]:
    try:
        payload = json.loads(event_path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(
            f"cannot read the event payload: {error.strerror}", file=event_path
        ) from None
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"the event payload is not JSON: {error.msg}", file=event_path, line=error.lineno
        ) from None
    if not isinstance(payload, dict):
        raise ConfigError("the event payload is not a JSON object", file=event_path)
    return payload


def decide_activity(*, mode: str, event_name: str, payload: dict[str, Any], sha: str) -> Activity:
    if mode == "publish":
        run = payload.get("workflow_run")
        head = run.get("head_sha") if isinstance(run, dict) else None
        if not (isinstance(head, str) and _SHA.fullmatch(head)):
            raise ConfigError(
                "`mode: publish` needs the workflow_run event payload's workflow_run.head_sha "
                "(a 40-character commit sha): without it nothing but the fork's own files would "
                "say which commit the results are for. Run it `on: workflow_run`"
            )
        return PublishActivity(triggering_head_sha=head)
    if event_name in PULL_REQUEST_EVENTS:
        return _pull_request(payload, event_name)
    if event_name in COMMIT_EVENTS:
        return CommitActivity(
            sha=sha,
            event_name=event_name,
            default_branch_push=event_name == "push" and _pushed_to_default(payload),
        )
    if event_name == "workflow_run":
        raise ConfigError(
            "on workflow_run the Action only publishes a fork's results: set input `mode: publish`"
        )
    supported = ", ".join(sorted(PULL_REQUEST_EVENTS | COMMIT_EVENTS))
    raise ConfigError(f"event {event_name!r} is not supported; supported events: {supported}")


def _pushed_to_default(payload: dict[str, Any]) -> bool:
    """A push event names the branch in ``ref`` and the repository's default branch."""
    repository = payload.get("repository")
    default = repository.get("default_branch") if isinstance(repository, dict) else None
    return (
        isinstance(default, str) and bool(default) and payload.get("ref") == f"refs/heads/{default}"
    )


def _pull_request(payload: dict[str, Any], event_name: str) -> PullRequestActivity:
    pull = payload.get("pull_request")
    fields = _pull_fields(pull) if isinstance(pull, dict) else None
    if fields is None:
        raise ConfigError(
            "the pull_request event payload lacks number, head.sha, base.sha or base.repo.full_name"
        )
    number, head_sha, base_sha, head_repo, base_repo = fields
    count = pull.get("changed_files") if isinstance(pull, dict) else None
    merge = pull.get("merge_commit_sha") if isinstance(pull, dict) else None
    labels = pull.get("labels") if isinstance(pull, dict) else None
    added = payload.get("label") if payload.get("action") == "labeled" else None
    added_name = added.get("name") if isinstance(added, dict) else None
    return PullRequestActivity(
        number=number,
        head_sha=head_sha,
        base_sha=base_sha,
        head_repository=head_repo,
        base_repository=base_repo,
        changed_files_count=count if isinstance(count, int) else None,
        event_name=event_name,
        merge_commit_sha=merge if isinstance(merge, str) and _SHA.fullmatch(merge) else None,
        labels=tuple(
            label["name"]
            for label in (labels if isinstance(labels, list) else [])
            if isinstance(label, dict) and isinstance(label.get("name"), str)
        ),
        labeled=added_name if isinstance(added_name, str) else None,
    )


def _pull_fields(pull: dict[str, Any]) -> tuple[int, str, str, str, str] | None:
    head: dict[str, Any] = pull["head"] if isinstance(pull.get("head"), dict) else {}
    base: dict[str, Any] = pull["base"] if isinstance(pull.get("base"), dict) else {}
    number = pull.get("number")
    head_sha, base_sha = head.get("sha"), base.get("sha")
    base_repo = (base.get("repo") or {}).get("full_name")
    # A deleted fork has head.repo null; it is still not the base repository.
    head_repo = (head.get("repo") or {}).get("full_name") or "(deleted fork)"
    if not (isinstance(number, int) and isinstance(base_repo, str) and isinstance(head_repo, str)):
        return None
    if not (isinstance(head_sha, str) and _SHA.fullmatch(head_sha)):
        return None
    if not (isinstance(base_sha, str) and _SHA.fullmatch(base_sha)):
        return None
    return number, head_sha, base_sha, head_repo, base_repo
