"""Which commit the workspace holds, and whether it is the pull request's code.

On ``pull_request`` the runner checks out the merge commit GitHub made (``GITHUB_SHA``).
On ``pull_request_target`` it checks out the base branch: evaluating that and putting a
success status on the pull request's head would pass code that was never evaluated. The
run refuses unless the workspace holds the pull request's head or its merge commit.
"""

from __future__ import annotations

import re
from pathlib import Path

from retrieval_eval.action.event import PullRequestActivity
from retrieval_eval.action.git import run_git
from retrieval_eval.action.inputs import RunnerContext
from retrieval_eval.compare.environment import head_from_git_files
from retrieval_eval.errors import RetrievalEvalError

_SHA = re.compile(r"[0-9a-f]{40}")
CHECKOUT_ADVICE = (
    "check out the pull request's code: with pull_request_target, "
    "`actions/checkout` with `ref: ${{ github.event.pull_request.head.sha }}` and "
    "`persist-credentials: false` (the workflow then runs the pull request's code with the "
    'base repository\'s secrets: see docs/action.md, "Fork pull requests"), or use the '
    "pull_request event"
)


def workspace_head(workspace: Path) -> str | None:
    """The commit checked out in ``workspace``: from git, else from git's files (the
    Action's image has no git). None: not a git checkout, or not readable."""
    out = run_git(workspace, "rev-parse", "HEAD")
    if out is not None and _SHA.fullmatch(out.decode().strip()):
        return out.decode().strip()
    return head_from_git_files(workspace, parents=False)


def checked_out_code_problem(runner: RunnerContext, pull: PullRequestActivity) -> None:
    """Raise unless the workspace holds the code this pull request proposes."""
    allowed = {pull.head_sha}
    if pull.merge_commit_sha is not None:
        allowed.add(pull.merge_commit_sha)
    if pull.event_name == "pull_request":
        allowed.add(runner.sha)  # the merge commit the runner checked out
    head = workspace_head(runner.workspace)
    if head in allowed:
        return
    if head is None and pull.event_name == "pull_request":
        return  # the runner's own checkout of GITHUB_SHA, without a .git folder to show it
    shown = head[:7] if head is not None else "an unknown commit"
    raise RetrievalEvalError(
        f"the workspace holds {shown}, which is neither this pull request's head "
        f"{pull.head_sha[:7]} nor its merge commit, so its code would not be evaluated; "
        + CHECKOUT_ADVICE
    )
