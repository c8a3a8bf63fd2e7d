"""The few GitHub REST calls the Action makes, through PyGithub, with bounded retries.

Retrying is PyGithub's ``GithubRetry`` (a urllib3 ``Retry``: it honours
``Retry-After`` and recognises secondary-rate-limit 403s), extended by one
rule: the whole sequence of attempts for one call fits a time budget, so a
rate limit that asks for an hour fails fast instead of eating the job's
timeout, and each call has a deadline of its own (an answer that trickles in
never trips the client's per-read timeout). 401, 404 and 422 are never retried:
asking again cannot fix them. After the runner's stop request nothing is retried,
and every call left must end within ``CALLS_AFTER_STOP_S`` of the request, so the
error status is still tried before the runner's SIGKILL.
"""

from __future__ import annotations

import base64
import logging
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from types import FrameType, TracebackType
from typing import Any, Self, TypeVar

import requests
from github import Auth, BadAttributeException, Github, GithubException, GithubRetry
from pydantic import SecretStr
from urllib3 import HTTPResponse
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError, ReadTimeoutError, ResponseError
from urllib3.util.retry import Retry

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.trust.redaction import clean
from retrieval_eval.trust.signals import CALLS_AFTER_STOP_S, seconds_left_after_stop

T = TypeVar("T")
GITHUB_ACTIONS_BOT = "github-actions[bot]"
RETRIED_STATUSES = [429, *range(500, 600)]  # plus 403, which GithubRetry adds and inspects


class _HideIdentityProbe(logging.Filter):
    """PyGithub logs every 403 at INFO; the expected one from ``/user`` would read as a failure."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "/user failed with 403" not in record.getMessage()


def quiet_identity_probe() -> None:
    """Called once by the Action's entry (it owns the process's logging)."""
    retry_logger = logging.getLogger("github.GithubRetry")
    if not any(isinstance(f, _HideIdentityProbe) for f in retry_logger.filters):
        retry_logger.addFilter(_HideIdentityProbe())


class _MalformedAnswer(Exception):
    """An answer that parsed but does not hold what the API documents."""


class GitHubApiError(RetrievalEvalError):
    """A GitHub call failed for good; the message names the call and never holds the token."""


@dataclass(frozen=True)
class FileChange:
    filename: str
    previous_filename: str | None


@dataclass(frozen=True)
class LabelEvent:
    """One ``labeled`` or ``unlabeled`` event of an issue or pull request."""

    event: str
    label: str
    actor: str
    created_at: datetime  # GitHub's clock, not the author's: it cannot be forged


@dataclass(frozen=True)
class CommitStatus:
    state: str
    description: str
    created_at: datetime  # GitHub's clock


@dataclass(frozen=True)
class MergedPull:
    """A merged pull request, as the commit's pulls listing shows it."""

    number: int
    head_sha: str  # the last commit of the pull request, the one its runs evaluated
    labels: tuple[str, ...]  # the labels on it now


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    author: str
    html_url: str


@dataclass
class RetryBudget:
    """Seconds that the whole Action run may spend on GitHub calls that need retrying.

    Shared by every call, so a flaky or hung API costs at most about ``total``
    seconds per run, however many calls it hits. Both the planned waits between
    attempts (``spent``) and the wall time of the calls themselves (attempts that
    time out included) count: a retry happens only if both leave room for its wait.
    """

    total: float
    spent: float = 0.0
    in_calls: float = 0.0  # wall time of calls made so far
    _call_started: float | None = None

    def elapsed(self) -> float:
        running = 0.0 if self._call_started is None else time.monotonic() - self._call_started
        return self.in_calls + running

    def allows(self, wait: float) -> bool:
        return self.total > 0 and max(self.spent, self.elapsed()) + wait <= self.total

    @contextmanager
    def timing(self) -> Iterator[None]:
        self._call_started = time.monotonic()
        try:
            yield
        finally:
            self.in_calls += time.monotonic() - self._call_started
            self._call_started = None

    def attempt_timeout(self, longest: float) -> float:
        """One attempt may not wait for an answer longer than the whole budget."""
        return longest if self.total <= 0 else max(1.0, min(longest, self.total))

    def call_deadline(self, attempt: float) -> float:
        """The longest one call (all its attempts and pages) may take: one attempt, plus
        what is left of the budget for retrying it."""
        return attempt + max(0.0, self.total - max(self.spent, self.elapsed()))


class _DeadlinePassed(BaseException):
    """Raised by the deadline's alarm: a BaseException, so that neither urllib3 (which turns
    an OSError into a retry) nor requests nor PyGithub can catch it on its way out."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Interrupt the call in the main thread after ``seconds``.

    The client's timeout bounds each read, not the answer: a peer that sends a byte now
    and then (a broken proxy) would otherwise hold the run for ever.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signal_number: int, frame: FrameType | None) -> None:
        raise _DeadlinePassed

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class BudgetedRetry(GithubRetry):
    """``GithubRetry`` that gives up when the next wait would overrun the run's ``RetryBudget``."""

    def __init__(self, *, budget: RetryBudget, **kwargs: Any) -> None:
        self.budget = budget
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> Self:
        kw.update(budget=self.budget)
        return super().new(**kw)

    def increment(  # type: ignore[override]  # the same signature as GithubRetry's
        self,
        method: str | None = None,
        url: str | None = None,
        response: HTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Retry:
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        wait = retry.get_backoff_time()
        if response is not None and retry.respect_retry_after_header:
            wait = max(wait, retry.get_retry_after(response) or 0.0)
        if seconds_left_after_stop() is not None:
            raise MaxRetryError(
                _pool,  # type: ignore[arg-type]
                url or "",
                error or ResponseError("the run was stopped: no retries"),
            )
        if not self.budget.allows(wait):
            # Keep the connection error itself as the reason, so the caller can say what failed.
            reason = error or ResponseError(
                f"retrying would wait more than {self.budget.total:g} s in all"
            )
            raise MaxRetryError(_pool, url or "", reason)  # type: ignore[arg-type]
        self.budget.spent += wait
        return retry


def make_retry(budget: RetryBudget, *, backoff_factor: float = 0.5) -> BudgetedRetry:
    return BudgetedRetry(
        budget=budget,
        total=10,
        backoff_factor=backoff_factor,
        backoff_max=30,
        status_forcelist=RETRIED_STATUSES,
        # GithubRetry adds POST; editing the sticky comment is a PATCH, and just as safe to repeat.
        allowed_methods=Retry.DEFAULT_ALLOWED_METHODS | {"GET", "POST", "PATCH"},
        # After the last attempt, hand back the final answer (e.g. 502): the error can name it.
        raise_on_status=False,
        # The wait on a secondary rate limit without Retry-After; the budget caps it.
        secondary_rate_wait=60.0,
    )


class GitHubApi:
    """One repository's view of the API. Methods raise ``GitHubApiError`` only."""

    def __init__(
        self,
        *,
        token: SecretStr,
        api_url: str,
        repository: str,
        retry_budget_seconds: float,
        backoff_factor: float = 0.5,
        timeout: int = 15,
        seconds_between_writes: float = 0.5,
    ) -> None:
        self.retry_budget = RetryBudget(retry_budget_seconds)
        self._attempt_timeout = math.ceil(self.retry_budget.attempt_timeout(timeout))
        self._client = Github(
            auth=Auth.Token(token.get_secret_value()),
            base_url=api_url,
            retry=make_retry(self.retry_budget, backoff_factor=backoff_factor),
            timeout=self._attempt_timeout,
            seconds_between_requests=None,
            seconds_between_writes=seconds_between_writes,
            per_page=100,  # fewer round trips when listing files and comments
            lazy=True,  # build URLs without fetching each object first
        )
        self._repository = repository
        self._token = token
        self.status_set = False  # whether this run has set a commit status yet

    def __repr__(self) -> str:
        return f"GitHubApi(repository={self._repository!r})"

    @contextmanager
    def _timed(self) -> Iterator[None]:
        deadline = self.retry_budget.call_deadline(self._attempt_timeout)
        after_stop = seconds_left_after_stop()
        if after_stop is not None:
            deadline = min(deadline, after_stop)
        with self.retry_budget.timing(), _deadline(deadline):
            yield

    def _in_time(self) -> str:
        if seconds_left_after_stop() is None:
            return "GitHub did not answer in time"
        return (
            f"GitHub did not answer within {CALLS_AFTER_STOP_S:g} s of the stop request "
            "(what a stopped run still asks GitHub must end before the runner kills it)"
        )

    @contextmanager
    def _call(self, what: str) -> Iterator[None]:
        try:
            with self._timed():
                yield
        except _DeadlinePassed:
            raise GitHubApiError(f"{what}: {self._in_time()}") from None
        except GithubException as error:
            raise GitHubApiError(
                self._redact(
                    f"{what}: GitHub answered {error.status}: {_message(error)}"
                    f"{_rate_limit(error, self.retry_budget)}"
                )
            ) from None
        except requests.RequestException as error:
            raise GitHubApiError(self._redact(f"{what}: {_connection_problem(error)}")) from None
        except (BadAttributeException, _MalformedAnswer, TypeError, AttributeError, KeyError):
            # A 200 whose body is not what the API documents (a proxy's page, a truncated
            # listing): a failed call like any other, so callers fall back or report it.
            raise GitHubApiError(f"{what}: GitHub's answer is not what the API returns") from None
        except ValueError as error:  # undecodable base64 content, among others
            raise GitHubApiError(
                f"{what}: GitHub's answer is not what the API returns ({type(error).__name__})"
            ) from None

    def _redact(self, text: str) -> str:
        secret = self._token.get_secret_value()
        return text.replace(secret, "***") if secret else text

    def _do(self, what: str, action: Callable[[], T]) -> T:
        with self._call(what):
            return action()
        raise AssertionError("unreachable")  # pragma: no cover - _call re-raises

    def _repo(self) -> Any:
        return self._client.get_repo(self._repository)

    def pull_request_files(self, number: int) -> list[FileChange]:
        def listing() -> list[FileChange]:
            changes = [
                FileChange(f.filename, f.previous_filename or None)
                for f in self._repo().get_pull(number).get_files()
            ]
            # A row without a name would read as "nothing watched changed": never skip on it.
            names = [name for c in changes for name in (c.filename, c.previous_filename or "x")]
            if not all(isinstance(name, str) and name for name in names):
                raise _MalformedAnswer
            return changes

        return self._do(f"listing the files of pull request #{number}", listing)

    def pull_request_head_sha(self, number: int) -> str:
        return self._do(
            f"reading pull request #{number}", lambda: str(self._repo().get_pull(number).head.sha)
        )

    def file_at(self, path: str, ref: str) -> bytes | None:
        """The file's bytes at ``ref``; None when it does not exist there."""

        def fetch() -> bytes | None:
            try:
                content = self._repo().get_contents(path, ref=ref)
            except GithubException as error:
                if error.status == 404:
                    return None
                raise
            if isinstance(content, list):
                return None  # a folder
            if content.encoding == "base64":
                return bytes(content.decoded_content)
            # Over 1 MB the contents API omits the content; the blob API serves up to 100 MB.
            blob = self._repo().get_git_blob(content.sha)
            return base64.b64decode(blob.content)

        return self._do(f"reading {path} at {ref[:7]}", fetch)

    def own_login(self) -> str:
        """Who our comments are authored by.

        A workflow's ``GITHUB_TOKEN`` cannot read ``/user`` (403) and posts as
        github-actions[bot]; neither can a GitHub App's installation token, which posts
        as ``<app>[bot]``: for both the answer is github-actions[bot], so the login a status
        was created by (``create_status``) is the better answer when there is one. A personal
        token or an app's user token can read it, and posts as itself.
        """
        try:
            with self._timed():
                return str(self._client.get_user().login)
        except _DeadlinePassed:
            raise GitHubApiError(f"reading /user: {self._in_time()}") from None
        except GithubException as error:
            if error.status == 403:
                return GITHUB_ACTIONS_BOT
            raise GitHubApiError(
                self._redact(f"reading /user: GitHub answered {error.status}")
            ) from None
        except requests.RequestException as error:
            raise GitHubApiError(
                self._redact(f"reading /user: {_connection_problem(error)}")
            ) from None

    def comments(self, number: int) -> list[Comment]:
        def listing() -> list[Comment]:
            return [
                Comment(c.id, c.body or "", c.user.login, c.html_url)
                for c in self._repo().get_issue(number).get_comments()
            ]

        return self._do(f"listing the comments of #{number}", listing)

    def create_comment(self, number: int, body: str) -> Comment:
        def create() -> Comment:
            c = self._repo().get_issue(number).create_comment(clean(body))
            return Comment(c.id, c.body or "", c.user.login, c.html_url)

        return self._do(f"commenting on #{number}", create)

    def edit_comment(self, number: int, comment_id: int, body: str) -> Comment:
        def edit() -> Comment:
            c = self._repo().get_issue(number).get_comment(comment_id)
            c.edit(clean(body))
            return Comment(c.id, c.body or "", c.user.login, c.html_url)

        return self._do(f"updating comment {comment_id} on #{number}", edit)

    def label_events(self, number: int) -> list[LabelEvent]:
        """The ``labeled`` and ``unlabeled`` events of #``number``, oldest first (the issue
        events API): who added a label is known only from these."""

        def listing() -> list[LabelEvent]:
            events = []
            for event in self._repo().get_issue(number).get_events():
                if event.event not in ("labeled", "unlabeled"):
                    continue
                label, actor, created = event.label, event.actor, event.created_at
                if label is None or actor is None:
                    continue  # a label or a user deleted since: it names no one
                if not isinstance(created, datetime):
                    raise _MalformedAnswer
                events.append(
                    LabelEvent(str(event.event), str(label.name), str(actor.login), created)
                )
            return events

        return self._do(f"listing the events of #{number}", listing)

    def permission(self, login: str) -> str:
        """``login``'s role on the repository as GitHub's permission endpoint reports it:
        admin, write (the maintain role too), read (triage too) or none."""
        return self._do(
            f"reading the permission of {login}",
            lambda: str(self._repo().get_collaborator_permission(login)),
        )

    def statuses(self, sha: str, context: str) -> list[CommitStatus]:
        """The statuses of ``context`` on ``sha``, oldest first, with GitHub's time for each.
        A status exists only once its commit was pushed."""

        def listing() -> list[CommitStatus]:
            found = []
            for status in self._repo().get_commit(sha).get_statuses():
                if status.context != context:
                    continue
                if not isinstance(status.created_at, datetime):
                    raise _MalformedAnswer
                found.append(
                    CommitStatus(
                        str(status.state), str(status.description or ""), status.created_at
                    )
                )
            return sorted(found, key=lambda status: status.created_at)

        return self._do(f"listing the statuses of {sha[:7]}", listing)

    def merged_pulls(self, sha: str) -> list[MergedPull]:
        """The merged pull requests that brought ``sha`` (the commit's pulls listing: for a
        commit on the default branch, the pull request merged as it)."""

        def listing() -> list[MergedPull]:
            pulls = []
            for pull in self._repo().get_commit(sha).get_pulls():
                if pull.merged_at is None:
                    continue  # an open pull request whose head this commit is
                head = str(pull.head.sha)
                if not head:
                    raise _MalformedAnswer
                names = tuple(str(label.name) for label in pull.labels)
                pulls.append(MergedPull(int(pull.number), head, names))
            return pulls

        return self._do(f"listing the pull requests of {sha[:7]}", listing)

    def create_status(
        self, sha: str, *, state: str, description: str, context: str, target_url: str
    ) -> str | None:
        """Set the status; return the login GitHub says created it: who this token posts as."""

        def create() -> str | None:
            status = (
                self._repo()
                .get_commit(sha)
                .create_status(
                    state=state,
                    description=clean(description),
                    context=context,
                    target_url=target_url,
                )
            )
            creator = status.creator
            return None if creator is None else str(creator.login)

        creator = self._do(f"setting status {context!r} on {sha[:7]}", create)
        self.status_set = True
        return creator


def _message(error: GithubException) -> str:
    data = error.data
    if isinstance(data, dict):
        message = str(data.get("message", ""))
        details = [str(e.get("message", "")) for e in data.get("errors", []) if isinstance(e, dict)]
        return "; ".join(part for part in [message, *details] if part) or "(no message)"
    return str(data)[:200] if data else "(no message)"


def _rate_limit(error: GithubException, budget: RetryBudget) -> str:
    """Which rate limit, and what it asked for: GitHub's own message may be missing."""
    if error.status not in (403, 429):
        return ""
    headers = {key.lower(): value for key, value in (error.headers or {}).items()}
    text = _message(error).lower()
    after = headers.get("retry-after")
    asked = f"; it asked to wait {after} s" if after else ""
    room = f", more than github-retry-seconds ({budget.total:g} s) allows"
    if "secondary rate limit" in text or (after and headers.get("x-ratelimit-remaining") != "0"):
        return f" (GitHub's secondary rate limit{asked}{room if after else ''})"
    if headers.get("x-ratelimit-remaining") == "0":
        reset = headers.get("x-ratelimit-reset")
        until = f" until {reset} (Unix time)" if reset else ""
        return f" (the token's hourly rate limit is used up{until})"
    return ""


def _connection_problem(error: requests.RequestException) -> str:
    reason = getattr(error.args[0], "reason", None) if error.args else None
    if isinstance(error, requests.Timeout) or isinstance(reason, TimeoutError | ReadTimeoutError):
        return "GitHub did not answer in time"
    if isinstance(error, requests.ConnectionError):
        return "could not reach the GitHub API (connection failed)"
    return f"request failed ({type(error).__name__})"
