"""One sticky comment per pull request and evaluation, found by a hidden marker and its author.

The marker carries the evaluation's id, so two evaluations in one repository
keep separate comments. The author check matters too: anyone can copy the
marker (a human quoting our comment, another bot), so a comment is ours only
if its author is exactly the login this token posts as. That login is the
``creator`` GitHub reports for the status this run set just before (right for
``GITHUB_TOKEN``, a GitHub App's token and a personal token alike); without
one, it is what ``/user`` says, and github-actions[bot] when ``/user`` is 403.

The author alone is not enough: every workflow of the repository posts as
github-actions[bot], and one that quotes the pull request's description (or our
comment) carries the marker too. So a comment is ours only if it is also shaped as we
write one: the marker opens it, and the next line is our own hidden header.

That header names the commit the report is for. A later run that ``paths`` skips
keeps that report and puts a banner above it saying so (the banner then opens the
header): the status of a skipped run is success, and it must not sit under a red
report that reads as if it were about the new commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from retrieval_eval.action.github_api import Comment

MAX_COMMENT_CHARS = 65_536  # GitHub rejects longer bodies with 422
_TRUNCATION_NOTE = (
    "\n\n…(cut to fit GitHub's comment limit; the full report is in the job summary)\n"
)


def marker(comment_id: str) -> str:
    return f"<!-- retrieval-eval:{comment_id} -->"


_EVALUATED = re.compile(r"<!-- retrieval-eval-evaluated:([0-9a-f]{7,64}) -->\n")
_SKIPPED_START = "<!-- retrieval-eval-skipped -->\n"
_SKIPPED_END = "<!-- retrieval-eval-/skipped -->\n"


def evaluated_tag(sha: str) -> str:
    """The hidden line naming the commit a comment's report is for."""
    return f"<!-- retrieval-eval-evaluated:{sha} -->\n"


def room_for_report(comment_id: str) -> int:
    """Characters left for the rendered report once the marker and commit lines are in."""
    return MAX_COMMENT_CHARS - len(marker(comment_id)) - 1 - len(evaluated_tag("0" * 40))


def compose_body(comment_id: str, report_markdown: str, *, evaluated: str | None = None) -> str:
    """Marker first, so even a cut body can still be found and updated next time.

    ``evaluated`` is the commit the report is for, kept hidden for a later skipped run.
    """
    tag = evaluated_tag(evaluated) if evaluated else ""
    return _fit(f"{marker(comment_id)}\n{tag}{report_markdown}")


def _fit(body: str) -> str:
    if len(body) > MAX_COMMENT_CHARS:
        body = body[: MAX_COMMENT_CHARS - len(_TRUNCATION_NOTE)] + _TRUNCATION_NOTE
    return body


def evaluated_commit(body: str) -> str | None:
    """The commit an earlier comment's report is for (None: a body without the line)."""
    found = _EVALUATED.search(body)
    return found.group(1) if found else None


def skipped_body(body: str, *, comment_id: str, banner_markdown: str) -> str:
    """``body`` (our earlier comment) with ``banner_markdown`` above its report, replacing
    the banner of an earlier skip, so the report below stays the last evaluation's."""
    head = f"{marker(comment_id)}\n"
    rest = body[len(head) :] if body.startswith(head) else body
    if rest.startswith(_SKIPPED_START) and _SKIPPED_END in rest:
        rest = rest.split(_SKIPPED_END, 1)[1]
    return _fit(f"{head}{_SKIPPED_START}{banner_markdown}\n\n{_SKIPPED_END}{rest}")


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


def written_by_us(body: str, comment_id: str) -> bool:
    """Whether ``body`` is shaped as the comments this Action writes for ``comment_id``:
    the marker first, then the hidden header ``compose_body`` or ``skipped_body`` puts
    under it. A comment quoting the marker anywhere else is someone else's."""
    head = f"{marker(comment_id)}\n"
    if not body.startswith(head):
        return False
    rest = body[len(head) :]
    return rest.startswith(_SKIPPED_START) or _EVALUATED.match(rest) is not None


def own_comments(comments: list[Comment], *, comment_id: str, login: str) -> list[Comment]:
    """The comments this Action wrote for ``comment_id``, oldest first."""
    return [c for c in comments if is_ours(c.author, login) and written_by_us(c.body, comment_id)]


def find_own_comment(comments: list[Comment], *, comment_id: str, login: str) -> Comment | None:
    ours = own_comments(comments, comment_id=comment_id, login=login)
    return ours[0] if ours else None


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


def mark_skipped(
    api: CommentApi,
    *,
    number: int,
    comment_id: str,
    mode: Literal["update", "new", "off"],
    banner: Callable[[str | None], str],
) -> CommentResult | None:
    """Put a skipped run's ``banner`` (given the earlier report's commit) on our latest
    comment; None when there is none (or comments are off): nothing was evaluated yet."""
    if mode == "off":
        return None
    ours = own_comments(api.comments(number), comment_id=comment_id, login=api.own_login())
    if not ours:
        return None
    # `update` edits the one post_comment would; `new` leaves the latest report on top.
    latest = ours[0] if mode == "update" else ours[-1]
    body = skipped_body(
        latest.body, comment_id=comment_id, banner_markdown=banner(evaluated_commit(latest.body))
    )
    edited = api.edit_comment(number, latest.id, body)
    return CommentResult("updated", edited.html_url)
