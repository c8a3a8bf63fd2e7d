"""Event payloads shaped like the ones GitHub writes to GITHUB_EVENT_PATH (trimmed)."""

from __future__ import annotations

from typing import Any


def _repo(full_name: str) -> dict[str, Any]:
    owner, name = full_name.split("/")
    return {
        "id": 1,
        "name": name,
        "full_name": full_name,
        "fork": full_name != "octo/notes",
        "owner": {"login": owner, "type": "User"},
        "html_url": f"https://github.example/{full_name}",
        "default_branch": "main",
    }


def pull_request_event(
    *,
    number: int,
    head_sha: str,
    base_sha: str,
    head_repo: str = "octo/notes",
    action: str = "opened",
    changed_files: int = 2,
    labels: tuple[str, ...] = (),
) -> dict[str, Any]:
    """``labels``: the pull request's labels when the event fired (``action="labeled"``
    names the last one as the label just added, as GitHub's payload does)."""
    payload: dict[str, Any] = {
        "action": action,
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "title": "Improve retrieval",
            "user": {"login": "alice", "type": "User"},
            "labels": [{"name": name, "color": "ededed"} for name in labels],
            "changed_files": changed_files,
            "head": {
                "sha": head_sha,
                "ref": "feature",
                "label": f"{head_repo.split('/')[0]}:feature",
                "repo": _repo(head_repo),
            },
            "base": {
                "sha": base_sha,
                "ref": "main",
                "label": "octo:main",
                "repo": _repo("octo/notes"),
            },
        },
        "repository": _repo("octo/notes"),
        "sender": {"login": "alice", "type": "User"},
    }
    if action == "labeled" and labels:
        payload["label"] = {"name": labels[-1], "color": "ededed"}
    return payload


def push_event(after: str, before: str = "0" * 40, *, branch: str = "main") -> dict[str, Any]:
    return {
        "ref": f"refs/heads/{branch}",
        "before": before,
        "after": after,
        "repository": _repo("octo/notes"),
        "head_commit": {"id": after, "message": "Update notes"},
        "sender": {"login": "alice", "type": "User"},
    }


def workflow_dispatch_event() -> dict[str, Any]:
    return {"ref": "refs/heads/main", "inputs": {}, "repository": _repo("octo/notes")}


def workflow_run_event(head_sha: str, *, head_repo: str = "mallory/notes") -> dict[str, Any]:
    return {
        "action": "completed",
        "workflow_run": {
            "id": 99,
            "name": "retrieval-eval",
            "event": "pull_request",
            "conclusion": "success",
            "head_sha": head_sha,
            "head_repository": _repo(head_repo),
            "pull_requests": [],  # GitHub leaves this empty for fork pull requests
        },
        "repository": _repo("octo/notes"),
    }
