"""One sticky comment per pull request and evaluation, found by a hidden marker and its author.

The marker carries the evaluation's id, so two evaluations in one repository
keep separate comments. The author check matters too: anyone can copy the
marker (a human quoting our comment, another bot), so a comment is ours only
if its author is exactly the login this token posts as. That login is the
``creator`` GitHub reports for the status this run set just before (right for
``GITHUB_TOKEN``, a GitHub App's token and a personal token alike); without
one, it is what ``/user`` says, and github-actions[bot] when ``/user`` is 403.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from retrieval_eval.action.github_api import Comment

MAX_COMMENT_CHARS = 65_536  # GitHub rejects longer bodies with 422
_TRUNCATION_NOTE = (
    "\n\n…(cut to fit GitHub's comment limit; the full report is in the job summary)\n"
)


def marker(comment_id: str) -> str:
    return f"<!-- retrieval-eval:{comment_id} -->"


def room_for_report(comment_id: str) -> int:
    """Characters left for the rendered report once the marker line is in."""
    return MAX_COMMENT_CHARS - len(marker(comment_id)) - 1


def compose_body(comment_id: str, report_markdown: str) -> str:
    """Marker first, so even a cut body can still be found and updated next time."""
    body = f"{marker(comment_id)}\n{report_markdown}"
    if len(body) > MAX_COMMENT_CHARS:
        body = body[: MAX_COMMENT_CHARS - len(_TRUNCATION_NOTE)] + _TRUNCATION_NOTE
    return body


class CommentApi(Protocol):
    def comments(self, number: int) -> list[Comment]: ...
    def create_comment(self, number: int, body: str) -> Comment: ...
    def edit_comment(self, number: int, comment_id: int, body: str) -> Comment: ...
    def own_login(self) -> str: ...


@dataclass(frozen=True)
class CommentResult:
    action: Literal["created", "updated", "off"]
    url: str


def is_ours(author: str, login: str) -> bool:
    """Whether ``author`` is who we post as: exactly ``login``, never any ``[bot]`` account."""
    return author == login


def find_own_comment(comments: list[Comment], *, comment_id: str, login: str) -> Comment | None:
    tag = marker(comment_id)
    for comment in comments:
        if is_ours(comment.author, login) and tag in comment.body:
            return comment
    return None


def post_comment(
    api: CommentApi,
    *,
    number: int,
    body: str,
    comment_id: str,
    mode: Literal["update", "new", "off"],
    login: str | None = None,
) -> CommentResult:
    """``login``: who this token posts as, when known (the creator of the status just set)."""
    if mode == "off":
        return CommentResult("off", "")
    if mode == "update":
        existing = find_own_comment(
            api.comments(number), comment_id=comment_id, login=login or api.own_login()
        )
        if existing is not None:
            updated = api.edit_comment(number, existing.id, body)
            return CommentResult("updated", updated.html_url)
    created = api.create_comment(number, body)
    return CommentResult("created", created.html_url)
