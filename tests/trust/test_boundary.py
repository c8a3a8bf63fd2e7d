"""The boundary's decision, and a child dropped to another user for real (as root).

The image's user does not exist on a development machine, so the drop is shown here with
``nobody``: what the child can write, read and list, and that the folders closed to it get
their modes back. tests/container/test_boundary.py shows the same in the image, through
the Action.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.trust.boundary import (
    CHILD_UID,
    CHILD_USER,
    RUNNER_UID,
    Boundary,
    BoundaryError,
    Decision,
    decide,
    runner_folders,
)

REPO = Path(__file__).resolve().parents[2]
# This suite's interpreter may live in root's home, which `nobody` cannot enter.
SYSTEM_PYTHON = "/usr/bin/python3"
NO_SUCH_USER = "retrieval-eval-test-no-such-user"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can drop a child's user")


def test_an_ordinary_user_runs_children_as_itself() -> None:
    assert decide(euid=1000, user=NO_SUCH_USER) == Decision(None, None)


def test_root_in_the_image_without_the_user_refuses(tmp_path: Path) -> None:
    marker = tmp_path / "boundary"
    marker.write_text("the image\n")
    decision = decide(euid=0, user=NO_SUCH_USER, marker=marker)
    assert decision.uid is None and decision.refusal is not None
    assert f"no user `{NO_SUCH_USER}`" in decision.refusal
    with pytest.raises(BoundaryError, match="refusing to run it as root"):
        Boundary(decision, ()).spawn_options()


def test_root_outside_the_image_without_the_user_warns(tmp_path: Path) -> None:
    decision = decide(euid=0, user=NO_SUCH_USER, marker=tmp_path / "absent")
    assert (decision.uid, decision.refusal) == (None, None)
    assert decision.warning is not None and f"no user `{NO_SUCH_USER}`" in decision.warning


def test_a_user_that_is_root_is_refused(tmp_path: Path) -> None:
    decision = decide(euid=0, user="root", marker=tmp_path / "absent")
    assert decision.refusal is not None and "uid 0" in decision.refusal


def test_root_with_the_user_drops_to_it(tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    assert decide(euid=0, user="nobody", marker=tmp_path / "absent") == Decision(
        nobody.pw_uid, nobody.pw_gid
    )


def test_the_image_creates_the_user_the_code_names() -> None:
    """Dockerfile writes the user's passwd and group lines: the same name and number."""
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    [passwd] = re.findall(r"'(" + re.escape(CHILD_USER) + r":x:\d+:\d+:[^']*)'", dockerfile)
    name, _, uid, gid, *_ = passwd.split(":")
    assert (name, int(uid), int(gid)) == (CHILD_USER, CHILD_UID, CHILD_UID)
    assert CHILD_UID not in (0, RUNNER_UID) and 60000 <= CHILD_UID < 65000
    assert f"'{CHILD_USER}:x:{CHILD_UID}:'" in dockerfile
    assert "/etc/retrieval-eval/boundary" in dockerfile


def test_the_runners_folders_are_the_file_commands_parents_and_the_named_folders() -> None:
    folders = runner_folders(
        files=["/github/file_commands/set_output_1", "/github/file_commands/step_summary_1", ""],
        folders=["/runner/_temp", "/github/home", "/", ""],
    )
    assert folders == [Path("/github/file_commands"), Path("/runner/_temp"), Path("/github/home")]


# What a child dropped to `nobody` can do, reported as JSON on its stdout.
PROBE = """\
import json, os, sys
def attempt(action):
    try:
        action()
        return "done"
    except OSError as error:
        return type(error).__name__
print(json.dumps({
    "uid": os.getuid(), "groups": os.getgroups(),
    "home": os.environ["HOME"], "tmpdir": os.environ["TMPDIR"],
    "home_empty": os.listdir(os.environ["HOME"]) == [],
    "write_home": attempt(lambda: open(os.path.join(os.environ["HOME"], "x"), "x").close()),
    "write_tmpdir": attempt(lambda: open(os.path.join(os.environ["TMPDIR"], "x"), "x").close()),
    "write_owned": attempt(lambda: open(sys.argv[1], "a").close()),
    "list_closed": attempt(lambda: os.listdir(sys.argv[2])),
    "read_parent_environ": attempt(lambda: open(f"/proc/{os.getppid()}/environ", "rb").read()),
}))
"""


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder other users may enter (pytest's own are root's, mode 0700)."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        folder.chmod(0o755)
        for parent in folder.parents:
            if parent.stat().st_mode & 0o001 == 0:
                pytest.skip(f"{parent} is closed to other users")
        yield folder


@as_root
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="needs a Python every user may run")
def test_a_dropped_child_writes_only_its_own_folders(open_tmp: Path) -> None:
    tmp_path = open_tmp
    nobody = pwd.getpwnam("nobody")
    closed = tmp_path / "file_commands"
    closed.mkdir(mode=0o755)
    closed.chmod(0o755)
    owned = tmp_path / "baseline.json"
    owned.write_text("{}")
    owned.chmod(0o644)
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    script.chmod(0o644)
    boundary = Boundary(Decision(nobody.pw_uid, nobody.pw_gid), [closed])

    options = boundary.spawn_options()
    done = subprocess.run(
        [SYSTEM_PYTHON, str(script), str(owned), str(closed)],
        capture_output=True, text=True, check=False, cwd=tmp_path, **options,
    )  # fmt: skip
    home = Path(options["env"]["HOME"])
    assert stat.S_IMODE(closed.stat().st_mode) == 0o700
    assert home.stat().st_uid == nobody.pw_uid
    boundary.end()

    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {
        "uid": nobody.pw_uid,
        "groups": [],
        "home": str(home),
        "tmpdir": options["env"]["TMPDIR"],
        "home_empty": True,
        "write_home": "done",
        "write_tmpdir": "done",
        "write_owned": "PermissionError",
        "list_closed": "PermissionError",
        "read_parent_environ": "PermissionError",
    }
    assert owned.read_text() == "{}"
    # The run's end: the child's folders are gone, the closed folder has its mode back.
    assert not home.parent.exists()
    assert stat.S_IMODE(closed.stat().st_mode) == 0o755


@as_root
def test_the_workspace_and_its_parents_are_never_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "home" / "work"
    workspace.mkdir(parents=True)
    (tmp_path / "home").chmod(0o755)
    monkeypatch.chdir(workspace)
    boundary = Boundary(Decision(65534, 65534), [tmp_path / "home"])
    boundary.spawn_options()
    try:
        assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o755
    finally:
        boundary.end()
