"""Threat: actions/checkout left the job's token in the repository's git configuration.

Unless the workflow says ``persist-credentials: false``, checkout keeps its token for later git
commands, in ``.git/config`` (up to v5) or in a file ``.git/config`` includes (v6). The
retriever runs in the workspace and could read it there, whatever is taken out of its
environment; so a pull request's run warns, naming the fix, and never prints the token.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.action.git_repo import git
from tests.security.entry import TOKEN, World, world_in


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    yield from world_in(tmp_path)


def _checkout_v4(world: World) -> None:
    secret = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    git(
        world.workspace,
        "config",
        "http.https://github.com/.extraheader",
        f"AUTHORIZATION: basic {secret}",
    )


def _checkout_v6(world: World) -> None:
    credentials = world.runs / "runner_temp" / "git-credentials-0f1e2d3c.config"
    credentials.parent.mkdir(parents=True, exist_ok=True)
    credentials.write_text(
        f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {TOKEN}\n'
    )
    gitdir = world.workspace / ".git"
    git(world.workspace, "config", f"includeIf.gitdir:{gitdir}.path", str(credentials))


def _pull_request(world: World):  # type: ignore[no-untyped-def]
    base = world.head()
    head = world.commit({"notes/extra.md": "# Extra\n\nA note.\n"}, "a note")
    return world.pull_request(7, base, head)


@pytest.mark.parametrize(
    "checkout", [_checkout_v4, _checkout_v6], ids=["v4-extraheader", "v6-include"]
)
def test_a_token_left_by_checkout_is_a_warning_naming_the_fix(world: World, checkout) -> None:  # type: ignore[no-untyped-def]
    checkout(world)

    run = _pull_request(world)

    assert run.returncode == 0, run.log
    [warning] = [
        line for line in run.stdout.splitlines() if "token readable by the retriever" in line
    ]
    assert warning.startswith("::warning ") and "persist-credentials: false" in warning
    logged = [line for line in run.log.splitlines() if not line.startswith("::add-mask::")]
    assert not [line for line in logged if TOKEN in line]


def test_an_ssh_key_left_by_checkout_is_a_warning_naming_the_fix(world: World) -> None:
    """checkout with `ssh-key:` writes the key under the runner's temp folder and points
    `core.sshCommand` at it."""
    key = world.runs / "runner_temp" / "5b1f3c1e-key"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n")
    git(
        world.workspace,
        "config",
        "core.sshCommand",
        f'"ssh" -i "{key}" -o StrictHostKeyChecking=yes -o "UserKnownHostsFile={key}_known"',
    )

    run = _pull_request(world)

    assert run.returncode == 0, run.log
    [warning] = [line for line in run.stdout.splitlines() if "SSH key readable" in line]
    assert warning.startswith("::warning ") and "persist-credentials: false" in warning
    assert "b3BlbnNzaC1rZXk" not in run.log


def test_a_checkout_without_persisted_credentials_gets_no_warning(world: World) -> None:
    run = _pull_request(world)

    assert run.returncode == 0, run.log
    assert "persist-credentials" not in run.log


REPOSITORY = Path(__file__).resolve().parents[2]


def _workflow_snippets() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for page in [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for number, block in enumerate(re.findall(r"```yaml\n(.*?)```", text, re.S), start=1):
            workflow = yaml.safe_load(block)
            if isinstance(workflow, dict) and "jobs" in workflow:
                found.append((f"{page.name} yaml block {number}", workflow))
    for path in sorted((REPOSITORY / ".github" / "workflows").glob("*.yml")):
        found.append((path.name, yaml.safe_load(path.read_text(encoding="utf-8"))))
    return found


def test_every_documented_pull_request_workflow_checks_out_without_persisting_the_token() -> None:
    snippets = _workflow_snippets()
    assert len(snippets) >= 5  # the README's, docs/action.md's and .github's workflows
    unsafe = []
    for where, workflow in snippets:
        triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
        if "pull_request" not in (triggers or {}):
            continue
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                checkout = str(step.get("uses", "")).startswith("actions/checkout")
                if checkout and (step.get("with") or {}).get("persist-credentials") is not False:
                    unsafe.append(where)
    assert unsafe == []
