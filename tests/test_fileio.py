"""Atomic writes: the file appears whole or not at all, with the mode the umask gives,
secrets masked; a refused write is an error naming the file; as root, what was written
goes back to the workspace's owner."""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval_eval.errors import RetrievalEvalError
from retrieval_eval.fileio import (
    atomic_write_bytes,
    atomic_write_text,
    atomic_write_utf8,
    give_to_owner_of,
)
from retrieval_eval.trust.redaction import register_secret


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o027)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask")
def test_a_written_file_gets_the_mode_the_umask_gives(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "report.json"
    atomic_write_text(target, "{}\n")
    assert target.read_text(encoding="utf-8") == "{}\n"
    assert mode(target) == 0o640  # 0666 under umask 027, not mkstemp's 0600


def test_a_rewrite_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "baseline.json"
    atomic_write_bytes(target, b"old")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json"]


def test_a_refused_write_is_an_error_naming_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "report"
    blocker.write_text("a file where a folder is needed", encoding="utf-8")
    with pytest.raises(RetrievalEvalError) as caught:
        atomic_write_text(blocker / "report.json", "{}")
    assert str(caught.value).startswith(f"{blocker / 'report.json'}: could not write: ")


def test_a_failure_while_writing_removes_the_temporary_file(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        atomic_write_bytes(tmp_path / "x.json", "text, not bytes")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_a_registered_secret_never_reaches_the_file(tmp_path: Path) -> None:
    secret = f"ghs_{secrets.token_hex(12)}"
    register_secret(secret)
    atomic_write_text(tmp_path / "a.md", f"token {secret}\n")
    atomic_write_utf8(tmp_path / "b.json", f'{{"t": "{secret}"}}'.encode())
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "token ***\n"
    assert (tmp_path / "b.json").read_text(encoding="utf-8") == '{"t": "***"}'


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file away")
def test_as_root_what_was_written_goes_to_the_workspace_owner(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.chown(workspace, 1234, 2345)
    report = workspace / "out" / "report" / "report.json"
    atomic_write_text(report, "{}")
    # The link's target lies outside the workspace, in this test's own folder: were the
    # link followed, the target would change owner (never point such a link at a system file).
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    (report.parent / "link").symlink_to(outside)

    assert give_to_owner_of(workspace, [report.parent, outside]) == []

    for path in (workspace / "out", report.parent, report, report.parent / "link"):
        owned = path.lstat()
        assert (owned.st_uid, owned.st_gid) == (1234, 2345), path
    assert outside.stat().st_uid == 0  # the link changed, not its target


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file away")
def test_a_workspace_root_owns_is_left_alone(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "report.json", "{}")
    os.chown(tmp_path / "report.json", 1234, 1234)
    assert give_to_owner_of(tmp_path, [tmp_path / "report.json"]) == []
    assert (tmp_path / "report.json").stat().st_uid == 1234
