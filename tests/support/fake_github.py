"""A fake GitHub REST API: a real threaded HTTP server on 127.0.0.1 that the real PyGithub reaches.

It implements only the endpoints retrieval-eval uses, but with GitHub's behaviour where a
client can trip on it: ``Link`` pagination, 401 for a missing or wrong token, ``/user``
answering 403 the way it does for a workflow's ``GITHUB_TOKEN``, 422 for a status description
over 140 characters or a comment body over 65,536, and injectable faults (any status with
headers, slow answers, dropped connections).
Every request is recorded so tests can assert exactly what was sent.

Usage::

    with FakeGitHub(token="ghs_x", repository="octo/notes") as api:
        api.add_pull(7, head_sha=..., base_sha=..., files=["a.md"])
        ...  # point GITHUB_API_URL at api.base_url
        assert api.statuses_for(head_sha)[-1]["state"] == "success"
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

GITHUB_ACTIONS_BOT: dict[str, Any] = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}
MAX_STATUS_DESCRIPTION = 140
MAX_COMMENT_BODY = 65_536
FILES_LISTING_CAP = 3_000  # GitHub stops listing a pull request's files here
CONTENTS_API_INLINE_LIMIT = 1_000_000  # bytes; larger files come back without their content


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without the API prefix and without the query string, e.g. /repos/o/r/pulls/7
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any  # decoded JSON, or None

    @property
    def route(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class Fault:
    """Misbehaviour for requests matching ``method`` (None: any) and the ``path`` regex."""

    path: str
    method: str | None = None
    status: int | None = None  # answer with this status instead of the real answer
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float = 0.0  # seconds before answering (the real answer unless status is set)
    drop: bool = False  # close the connection without answering
    # Seconds between the bytes of the answer's body (a peer that never quite finishes);
    # each gap is shorter than a client's read timeout, so only a deadline ends the wait.
    trickle: float = 0.0
    times: int | None = 1  # how many matching requests it affects; None = every one
    # Called (in the server's thread) when a matching request has arrived, before the fault
    # acts: how a test does something at an exact point of the client's run.
    on_request: Callable[[], None] | None = None

    def matches(self, method: str, path: str) -> bool:
        if self.times is not None and self.times <= 0:
            return False
        return (self.method is None or self.method == method) and re.search(
            self.path, path
        ) is not None


@dataclass
class _Pull:
    number: int
    head_sha: str
    base_sha: str
    head_repo: str
    base_ref: str
    head_ref: str
    files: list[dict[str, Any]]
    merge_commit_sha: str | None = None  # set by merge_pull()
    merged_at: str | None = None


class FakeGitHub:
    """One fake repository's worth of GitHub, seeded by the test, served on a random local port."""

    def __init__(
        self,
        *,
        token: str = "ghs_fake-token-for-tests",
        repository: str = "octo/notes",
        user: dict[str, Any] | None = None,
        prefix: str = "/api/v3",
        default_branch: str = "main",
        app: dict[str, Any] | None = None,
    ) -> None:
        """``user`` None: ``/user`` answers 403 and comments are by github-actions[bot], or by
        ``app`` (a GitHub App's installation token: ``/user`` is 403 for it too)."""
        self.token = token
        self.repository = repository
        self.user = user
        self.app = app
        self.prefix = prefix
        self.default_branch = default_branch
        self.requests: list[RecordedRequest] = []
        self.faults: list[Fault] = []
        self.pulls: dict[int, _Pull] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}  # issue number -> comments
        self.statuses: dict[str, list[dict[str, Any]]] = {}  # sha -> statuses, oldest first
        self.contents: dict[tuple[str, str], bytes] = {}  # (ref, path) -> bytes
        self.issue_events: dict[int, list[dict[str, Any]]] = {}  # issue number -> oldest first
        # login -> the legacy base role GitHub's permission endpoint reports: admin, write
        # (which the maintain role also reports), read (triage too) or none.
        self.permissions: dict[str, str] = {}
        self._next_id = 1000
        # The server's clock: every object it creates (a label event, a status, a merge) gets
        # the next second, so their created_at order is the order they were made in, as on
        # GitHub (whose timestamps have a resolution of one second).
        self._clock = datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeGitHub:
        handler = type("_BoundHandler", (_Handler,), {"api": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # A short poll interval makes stop() return at once instead of after up to 0.5 s.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases injected delays so shutdown is immediate
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the server first"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What GITHUB_API_URL is set to (a GitHub Enterprise Server-shaped URL by default)."""
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    @property
    def comment_author(self) -> dict[str, Any]:
        return self.user or self.app or GITHUB_ACTIONS_BOT

    # --- seeding ---------------------------------------------------------------------------
    def add_pull(
        self,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        files: list[str | dict[str, Any]] = (),  # type: ignore[assignment]
        head_repo: str | None = None,
        base_ref: str = "main",
        head_ref: str = "feature",
    ) -> None:
        """Seed a pull request; a str file is "modified", a dict is used as the API row."""
        rows = [
            {"filename": f, "status": "modified", "additions": 1, "deletions": 0, "changes": 1}
            if isinstance(f, str)
            else f
            for f in files
        ]
        self.pulls[number] = _Pull(
            number, head_sha, base_sha, head_repo or self.repository, base_ref, head_ref, rows
        )
        self.comments.setdefault(number, [])

    def add_comment(self, number: int, body: str, *, author: dict[str, Any]) -> dict[str, Any]:
        """Seed anyone's comment (e.g. a human quoting our marker, which must stay theirs)."""
        with self._lock:
            return self._store_comment(number, body, author)

    def label_event(
        self, number: int, label: str, *, actor: str, event: str = "labeled"
    ) -> dict[str, Any]:
        """Seed a ``labeled`` or ``unlabeled`` event on an issue or pull request, as the
        issue events API lists it."""
        with self._lock:
            row = {
                "id": self._new_id(),
                "event": event,
                "actor": {"login": actor, "id": abs(hash(actor)) % 100_000, "type": "User"},
                "label": {"name": label, "color": "ededed"},
                "created_at": self._now(),
            }
            self.issue_events.setdefault(number, []).append(row)
            return row

    def labels_on(self, number: int) -> list[str]:
        """The labels on #``number`` now: each whose last event is ``labeled``."""
        on: dict[str, bool] = {}
        for row in self.issue_events.get(number, []):
            if row["event"] in ("labeled", "unlabeled"):
                on[row["label"]["name"]] = row["event"] == "labeled"
        return [name for name, present in on.items() if present]

    def merge_pull(self, number: int, *, merge_commit_sha: str) -> None:
        """Merge pull request #``number`` as ``merge_commit_sha``, the commit the push to the
        base branch brings: the commit's pulls listing names it from then on."""
        with self._lock:
            pull = self.pulls[number]
            pull.merge_commit_sha = merge_commit_sha
            pull.merged_at = self._now()

    def set_permission(self, login: str, permission: str) -> None:
        """What the collaborator permission endpoint says of ``login`` (unset: read, as
        GitHub answers for anyone on a public repository)."""
        self.permissions[login] = permission

    def put_content(self, ref: str, path: str, data: bytes | str) -> None:
        self.contents[(ref, path)] = data.encode() if isinstance(data, str) else data

    def inject(self, fault: Fault) -> Fault:
        self.faults.append(fault)
        return fault

    # --- inspection ------------------------------------------------------------------------
    def statuses_for(self, sha: str) -> list[dict[str, Any]]:
        return list(self.statuses.get(sha, []))

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        return list(self.comments.get(number, []))

    def routes(self) -> list[str]:
        return [r.route for r in self.requests]

    def requests_to(self, method: str, path_regex: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method and re.search(path_regex, r.path)]

    # --- internals used by the handler -----------------------------------------------------
    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _now(self) -> str:
        """The next second of the server's clock, as GitHub writes a timestamp."""
        self._clock += timedelta(seconds=1)
        return self._clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _store_comment(self, number: int, body: str, author: dict[str, Any]) -> dict[str, Any]:
        comment_id = self._new_id()
        api = f"http://127.0.0.1:{self.port}{self.prefix}/repos/{self.repository}"
        comment = {
            "id": comment_id,
            "body": body,
            "user": dict(author),
            "url": f"{api}/issues/comments/{comment_id}",
            "html_url": f"https://github.example/{self.repository}/pull/{number}#issuecomment-{comment_id}",
            "issue_url": f"{api}/issues/{number}",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }
        self.comments.setdefault(number, []).append(comment)
        return comment

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.matches(method, path):
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None


_Response = tuple[int, Any, dict[str, str]]


class _Handler(BaseHTTPRequestHandler):
    api: FakeGitHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean; the recorded requests are the log."""

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def _serve(self, method: str) -> None:
        api = self.api
        url = urlsplit(self.path)
        path = url.path[len(api.prefix) :] if url.path.startswith(api.prefix) else url.path
        query = parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        with api._lock:
            api.requests.append(RecordedRequest(method, path, query, dict(self.headers), body))
        fault = api._take_fault(method, path)
        if fault is not None:
            if fault.on_request is not None:
                fault.on_request()
            if fault.delay:
                api._stopping.wait(fault.delay)
            if fault.drop:
                self.close_connection = True
                return
            if fault.trickle:
                self._trickle(fault.trickle)
                return
            if fault.status is not None:
                message = fault.body if fault.body is not None else {"message": "injected fault"}
                self._send(fault.status, message, fault.headers)
                return
        if not self._authorized():
            self._send(401, {"message": "Bad credentials"})
            return
        with api._lock:
            status, payload, headers = self._route(method, path, query, body)
        self._send(status, payload, headers)

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        return scheme.lower() in {"token", "bearer"} and value == self.api.token

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode() if payload is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _trickle(self, gap: float) -> None:
        """Headers at once, then one byte of a 1 MB body per ``gap`` seconds, until the
        client hangs up or the fake stops."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(1_000_000))
        self.end_headers()
        try:
            self.wfile.write(b"[")
            self.wfile.flush()
            while not self.api._stopping.wait(gap):
                self.wfile.write(b" ")
                self.wfile.flush()
        except OSError:
            return  # the client gave up

    # --- routing ---------------------------------------------------------------------------
    def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> _Response:
        api = self.api
        if method == "GET" and path == "/user":
            if api.user is None:
                return 403, {"message": "Resource not accessible by integration"}, {}
            return 200, api.user, {}
        repo_prefix = f"/repos/{api.repository}"
        if not path.startswith(repo_prefix):
            return _not_found()
        rest = path[len(repo_prefix) :]
        routes: list[tuple[str, str, Any]] = [
            ("GET", r"", self._repository),
            ("GET", r"/pulls/(\d+)", self._pull),
            ("GET", r"/pulls/(\d+)/files", self._pull_files),
            ("GET", r"/issues/(\d+)/comments", self._list_comments),
            ("GET", r"/issues/(\d+)/events", self._list_issue_events),
            ("GET", r"/collaborators/([^/]+)/permission", self._permission),
            ("POST", r"/issues/(\d+)/comments", self._create_comment),
            ("PATCH", r"/issues/comments/(\d+)", self._edit_comment),
            ("POST", r"/statuses/([0-9a-f]{40})", self._create_status),
            ("GET", r"/commits/([0-9a-f]{40})", self._commit),
            ("GET", r"/commits/([0-9a-f]{40})/pulls", self._commit_pulls),
            ("GET", r"/commits/([0-9a-f]{40})/statuses", self._list_statuses),
            ("GET", r"/statuses/([0-9a-f]{40})", self._list_statuses),
            ("GET", r"/contents/(.+)", self._get_content),
            ("PUT", r"/contents/(.+)", self._put_content),
            ("GET", r"/git/blobs/([0-9a-f]{40})", self._blob),
        ]
        for route_method, pattern, action in routes:
            match = re.fullmatch(pattern, rest)
            if match and route_method == method:
                result: _Response = action(*match.groups(), query=query, body=body)
                return result
        return _not_found()

    def _api_url(self, suffix: str = "") -> str:
        return (
            f"http://127.0.0.1:{self.api.port}{self.api.prefix}/repos/{self.api.repository}{suffix}"
        )

    def _repo_json(self, full_name: str) -> dict[str, Any]:
        owner = full_name.split("/")[0]
        return {
            "id": abs(hash(full_name)) % 10_000_000,
            "name": full_name.split("/")[1],
            "full_name": full_name,
            "owner": {"login": owner, "type": "User"},
            "private": False,
            "fork": full_name != self.api.repository,
            "default_branch": self.api.default_branch,
            "url": f"http://127.0.0.1:{self.api.port}{self.api.prefix}/repos/{full_name}",
        }

    def _repository(self, **_: Any) -> _Response:
        return 200, self._repo_json(self.api.repository), {}

    def _pull(self, number: str, **_: Any) -> _Response:
        pull = self.api.pulls.get(int(number))
        if pull is None:
            return _not_found()
        return 200, {**self._pull_json(pull), "changed_files": len(pull.files)}, {}

    def _pull_json(self, pull: _Pull) -> dict[str, Any]:
        """A pull request as the listings show it (the single-pull answer adds counts)."""
        return {
            "number": pull.number,
            "state": "open" if pull.merged_at is None else "closed",
            "url": self._api_url(f"/pulls/{pull.number}"),
            "issue_url": self._api_url(f"/issues/{pull.number}"),
            "html_url": f"https://github.example/{self.api.repository}/pull/{pull.number}",
            "labels": [
                {"name": name, "color": "ededed"} for name in self.api.labels_on(pull.number)
            ],
            "merged_at": pull.merged_at,
            "merge_commit_sha": pull.merge_commit_sha,
            "head": {
                "sha": pull.head_sha,
                "ref": pull.head_ref,
                "repo": self._repo_json(pull.head_repo),
            },
            "base": {
                "sha": pull.base_sha,
                "ref": pull.base_ref,
                "repo": self._repo_json(self.api.repository),
            },
        }

    def _commit_pulls(self, sha: str, *, query: dict[str, list[str]], **_: Any) -> _Response:
        """GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls: for a commit on the default
        branch, the merged pull request that brought it; for any other, the open pull requests
        whose head it is."""
        merged = [p for p in self.api.pulls.values() if p.merge_commit_sha == sha]
        rows = merged or [
            p for p in self.api.pulls.values() if p.merged_at is None and p.head_sha == sha
        ]
        return self._paginate([self._pull_json(p) for p in rows], query, f"/commits/{sha}/pulls")

    def _pull_files(self, number: str, *, query: dict[str, list[str]], **_: Any) -> _Response:
        pull = self.api.pulls.get(int(number))
        if pull is None:
            return _not_found()
        return self._paginate(pull.files[:FILES_LISTING_CAP], query, f"/pulls/{number}/files")

    def _list_comments(self, number: str, *, query: dict[str, list[str]], **_: Any) -> _Response:
        if int(number) not in self.api.comments:
            return _not_found()
        return self._paginate(self.api.comments[int(number)], query, f"/issues/{number}/comments")

    def _list_issue_events(
        self, number: str, *, query: dict[str, list[str]], **_: Any
    ) -> _Response:
        if int(number) not in self.api.pulls and int(number) not in self.api.issue_events:
            return _not_found()
        rows = self.api.issue_events.get(int(number), [])
        return self._paginate(rows, query, f"/issues/{number}/events")

    def _permission(self, login: str, **_: Any) -> _Response:
        """GET /repos/{owner}/{repo}/collaborators/{username}/permission."""
        permission = self.api.permissions.get(login, "read")
        user = {"login": login, "id": abs(hash(login)) % 100_000, "type": "User"}
        role = {"admin": "admin", "write": "write", "read": "read"}.get(permission, "none")
        return 200, {"permission": permission, "role_name": role, "user": user}, {}

    def _paginate(self, rows: list[Any], query: dict[str, list[str]], suffix: str) -> _Response:
        per_page = min(int(query.get("per_page", ["30"])[0]), 100)
        page = int(query.get("page", ["1"])[0])
        last = max(1, -(-len(rows) // per_page))
        chunk = rows[(page - 1) * per_page : page * per_page]
        links = []
        if page < last:
            for rel, number in (("next", page + 1), ("last", last)):
                query = urlencode({"per_page": per_page, "page": number})
                links.append(f'<{self._api_url(suffix)}?{query}>; rel="{rel}"')
        return 200, chunk, ({"Link": ", ".join(links)} if links else {})

    def _create_comment(self, number: str, *, body: Any, **_: Any) -> _Response:
        if int(number) not in self.api.comments:
            return _not_found()
        problem = _comment_problem(body)
        if problem:
            return problem
        return 201, self.api._store_comment(int(number), body["body"], self.api.comment_author), {}

    def _edit_comment(self, comment_id: str, *, body: Any, **_: Any) -> _Response:
        for comments in self.api.comments.values():
            for comment in comments:
                if comment["id"] == int(comment_id):
                    if comment["user"]["login"] != self.api.comment_author["login"]:
                        return 403, {"message": "Resource not accessible by integration"}, {}
                    problem = _comment_problem(body)
                    if problem:
                        return problem
                    comment["body"] = body["body"]
                    comment["updated_at"] = "2026-01-02T00:00:00Z"
                    return 200, comment, {}
        return _not_found()

    def _create_status(self, sha: str, *, body: Any, **_: Any) -> _Response:
        state = (body or {}).get("state")
        description = (body or {}).get("description") or ""
        if state not in {"error", "failure", "pending", "success"}:
            return _validation_failed(
                "Status", "state", f"state {state!r} is not included in the list"
            )
        if len(description) > MAX_STATUS_DESCRIPTION:
            return _validation_failed(
                "Status", "description", "description is too long (maximum is 140 characters)"
            )
        status = {
            "id": self.api._new_id(),
            "state": state,
            "description": description,
            "context": body.get("context", "default"),
            "target_url": body.get("target_url"),
            "url": self._api_url(f"/statuses/{sha}"),
            "creator": self.api.comment_author,
            "created_at": self.api._now(),
        }
        status["updated_at"] = status["created_at"]
        self.api.statuses.setdefault(sha, []).append(status)
        return 201, status, {}

    def _commit(self, sha: str, **_: Any) -> _Response:
        """Every well-formed sha exists: the fake keeps no history, only what was posted to it."""
        return 200, {"sha": sha, "url": self._api_url(f"/commits/{sha}"), "files": []}, {}

    def _list_statuses(self, sha: str, *, query: dict[str, list[str]], **_: Any) -> _Response:
        """Newest first, paginated, as GitHub lists a commit's statuses."""
        rows = list(reversed(self.api.statuses.get(sha, [])))
        return self._paginate(rows, query, f"/statuses/{sha}")

    def _get_content(self, path: str, *, query: dict[str, list[str]], **_: Any) -> _Response:
        ref = query.get("ref", [self.api.default_branch])[0]
        data = self.api.contents.get((ref, path))
        if data is None:
            return _not_found()
        return 200, _content_json(self._api_url(f"/contents/{path}"), path, data), {}

    def _blob(self, sha: str, **_: Any) -> _Response:
        for data in self.api.contents.values():
            if git_blob_sha(data) == sha:
                encoded = base64.b64encode(data).decode()
                return (
                    200,
                    {"sha": sha, "size": len(data), "encoding": "base64", "content": encoded},
                    {},
                )
        return _not_found()

    def _put_content(self, path: str, *, body: Any, **_: Any) -> _Response:
        if not body or "message" not in body or "content" not in body:
            return _validation_failed("Content", "content", "message and content are required")
        ref = body.get("branch", self.api.default_branch)
        data = base64.b64decode(body["content"])
        created = (ref, path) not in self.api.contents
        self.api.contents[(ref, path)] = data
        content = _content_json(self._api_url(f"/contents/{path}"), path, data)
        return (201 if created else 200), {"content": content, "commit": {"sha": "0" * 40}}, {}


def _content_json(url: str, path: str, data: bytes) -> dict[str, Any]:
    """Like GitHub: over 1 MB the contents API leaves the content out (read the blob instead)."""
    large = len(data) > CONTENTS_API_INLINE_LIMIT
    return {
        "type": "file",
        "encoding": "none" if large else "base64",
        "size": len(data),
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "content": "" if large else base64.b64encode(data).decode(),
        "sha": git_blob_sha(data),
        "url": url,
    }


def git_blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _comment_problem(body: Any) -> _Response | None:
    text = (body or {}).get("body")
    if not isinstance(text, str) or not text:
        return _validation_failed("IssueComment", "body", "body can't be blank")
    if len(text) > MAX_COMMENT_BODY:
        return _validation_failed(
            "IssueComment", "body", "body is too long (maximum is 65536 characters)"
        )
    return None


def _validation_failed(resource: str, field_name: str, message: str) -> _Response:
    error = {"resource": resource, "code": "custom", "field": field_name, "message": message}
    return 422, {"message": "Validation Failed", "errors": [error]}, {}


def _not_found() -> _Response:
    return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
