"""The sha256 of a model folder's files, remembered in a stamp beside them: a stamp is
trusted only while each file's (device, inode, size, mtime, ctime) is unchanged, so a
model changed in place or replaced after its stamp is still refused by `retrieval-eval
model verify`; a file too new to be stamped, a folder inside a repository's work tree and
a stamp anyone else may write are hashed every time."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from retrieval_eval.index import model_hashes
from retrieval_eval.index.model_catalog import DEFAULT_MODEL
from retrieval_eval.index.model_hashes import RACY_SECONDS, STAMP_FILE, folder_sha256
from retrieval_eval.index.model_install import MODEL_SHA256, TOKENIZER_SHA256, file_sha256
from tests.index.conftest import FreshInstall, run_cli


def _stamp_as_it_is_now(folder: Path) -> None:
    """The stamp a run would leave for ``folder``'s files as they are now, each with its
    pinned sha256 (written here: the files were copied just now, too recently for a run
    to stamp them)."""
    pins = {**TOKENIZER_SHA256, "model.onnx": MODEL_SHA256}
    files = {}
    for name, sha in pins.items():
        status = (folder / name).stat()
        key = [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns]
        files[name] = {"key": [*key, status.st_ctime_ns], "sha256": sha}
    (folder / STAMP_FILE).write_text(json.dumps({"format": 1, "files": files}), encoding="utf-8")
    (folder / STAMP_FILE).chmod(0o644)


def test_a_model_changed_after_its_stamp_is_still_refused(
    fresh_install: FreshInstall, tmp_path: Path
) -> None:
    folder = tmp_path / "onnx"
    shutil.copytree(fresh_install.model_dir, folder)
    _stamp_as_it_is_now(folder)
    assert run_cli("model", "verify", DEFAULT_MODEL, "--dir", str(folder)).returncode == 0
    model = folder / "model.onnx"
    before = model.stat()
    with model.open("r+b") as handle:  # one byte, in place: same inode, same size
        handle.seek(before.st_size // 2)
        byte = handle.read(1)
        handle.seek(before.st_size // 2)
        handle.write(bytes([byte[0] ^ 0x01]))
    os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))  # even the mtime put back
    changed = run_cli("model", "verify", DEFAULT_MODEL, "--dir", str(folder))
    assert changed.returncode == 2
    assert f"model.onnx has sha256 {file_sha256(model)}, expected {MODEL_SHA256}" in (
        changed.stderr
    )


def test_a_model_replaced_after_its_stamp_is_still_refused(
    fresh_install: FreshInstall, tmp_path: Path
) -> None:
    folder = tmp_path / "onnx"
    shutil.copytree(fresh_install.model_dir, folder)
    _stamp_as_it_is_now(folder)
    model = folder / "model.onnx"
    before = model.stat()
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0x01
    replacement = tmp_path / "model.onnx"
    replacement.write_bytes(bytes(data))
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    replacement.replace(model)  # another inode with the old size and mtime
    changed = run_cli("model", "verify", DEFAULT_MODEL, "--dir", str(folder))
    assert changed.returncode == 2
    assert f"model.onnx has sha256 {file_sha256(model)}, expected {MODEL_SHA256}" in (
        changed.stderr
    )


def written(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def hashed_later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Hash as if ``seconds`` had passed since the files were written: a file's ctime is
    always now when it is written and cannot be set back, and the suite does not sleep."""
    real = time.time_ns
    monkeypatch.setattr(model_hashes.time, "time_ns", lambda: real() + int(seconds * 1e9))


def test_a_file_is_stamped_once_old_enough_and_a_changed_file_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    written(folder, "model.onnx", b"weights")
    first = folder_sha256(folder, ("model.onnx",))
    assert first == {"model.onnx": file_sha256(folder / "model.onnx")}
    assert not (folder / STAMP_FILE).exists()  # written just now: racily clean, not stamped
    hashed_later(monkeypatch, RACY_SECONDS + 1)
    model_hashes._KNOWN.clear()
    assert folder_sha256(folder, ("model.onnx",)) == first
    stamp = json.loads((folder / STAMP_FILE).read_text(encoding="utf-8"))
    assert stamp["files"]["model.onnx"]["sha256"] == first["model.onnx"]
    assert oct((folder / STAMP_FILE).stat().st_mode & 0o777) == "0o644"
    (folder / "model.onnx").write_bytes(b"other weights")
    model_hashes._KNOWN.clear()
    assert folder_sha256(folder, ("model.onnx",)) == {
        "model.onnx": file_sha256(folder / "model.onnx")
    }


def test_a_stamp_says_nothing_when_forged_or_others_may_write_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    model = written(folder, "model.onnx", b"weights")
    status = model.stat()
    key = [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]
    forged = {"format": 1, "files": {"model.onnx": {"key": key, "sha256": "0" * 64}}}
    (folder / STAMP_FILE).write_text(json.dumps(forged), encoding="utf-8")
    (folder / STAMP_FILE).chmod(0o666)  # group and others may write it: not read
    model_hashes._KNOWN.clear()
    assert folder_sha256(folder, ("model.onnx",))["model.onnx"] == file_sha256(model)
    (folder / STAMP_FILE).write_text(json.dumps(forged), encoding="utf-8")
    (folder / STAMP_FILE).chmod(0o644)  # ours alone: trusted while the file is unchanged
    model_hashes._KNOWN.clear()
    assert folder_sha256(folder, ("model.onnx",))["model.onnx"] == "0" * 64


def test_a_folder_in_a_work_tree_is_hashed_every_time_and_never_stamped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    folder = tmp_path / "models" / "mine"
    folder.mkdir(parents=True)
    model = written(folder, "model.onnx", b"weights")
    hashed_later(monkeypatch, RACY_SECONDS + 1)
    model_hashes._KNOWN.clear()
    assert folder_sha256(folder, ("model.onnx",))["model.onnx"] == file_sha256(model)
    assert not (folder / STAMP_FILE).exists()
