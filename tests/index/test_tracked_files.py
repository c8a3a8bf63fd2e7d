"""tracked_by_git reads .git/index as git itself lists it, on real repositories.

Every index format git writes (2, 3 with extended flags, 4 with prefix compression, a split
index, SHA-1 and SHA-256 object names) is compared with `git ls-files`; a damaged index
is "cannot tell", never an exception.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.index.tracked_files import tracked_by_git, tracked_under
from tests.action.git_repo import GIT_ENV

_SEGMENT = st.text(alphabet="abcxyz-_.é", min_size=1, max_size=12).filter(
    lambda name: name not in {".", ".."} and not name.startswith(".git")
)
_PATHS = st.lists(st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join), max_size=12)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, check=True
    ).stdout


def _repository(root: Path, files: list[str], *, object_format: str = "sha1") -> Path:
    root.mkdir(parents=True)
    _git(root, "init", "-q", f"--object-format={object_format}")
    for name in files:
        path = root / name
        if path.is_dir() or any(parent.is_file() for parent in path.parents):
            continue  # a file where a folder is wanted, or the reverse: not a valid tree
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name, encoding="utf-8")
    _git(root, "add", "-A")
    return root


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tracked=_PATHS,
    untracked=_PATHS,
    version=st.sampled_from(["2", "3", "4", "split"]),
    object_format=st.sampled_from(["sha1", "sha256"]),
)
def test_agrees_with_git_ls_files(
    tmp_path_factory: pytest.TempPathFactory,
    tracked: list[str],
    untracked: list[str],
    version: str,
    object_format: str,
) -> None:
    root = _repository(tmp_path_factory.mktemp("r") / "repo", tracked, object_format=object_format)
    listed = set(_git(root, "ls-files", "-z").split("\0")) - {""}
    if listed and version == "3":
        _git(root, "update-index", "--skip-worktree", "--", sorted(listed)[0])  # an extended entry
    elif version == "split":
        _git(root, "update-index", "--split-index")
        if listed:  # an entry changed after the split lives in the split part
            changed = sorted(listed)[-1]
            (root / changed).write_text("changed", encoding="utf-8")
            _git(root, "add", "--", changed)
    else:
        _git(root, "update-index", "--index-version", version)

    asked = [root / name for name in {*tracked, *untracked}]
    found = tracked_by_git(asked)

    assert found.unreadable is None
    assert {path.relative_to(root).as_posix() for path in found.paths} == {
        path.relative_to(root).as_posix()
        for path in asked
        if path.relative_to(root).as_posix() in listed
    }


def test_a_path_through_a_symlink_counts_where_it_leads(tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo", ["blobs/embeddings/embeddings.sqlite3"])
    (root / "cache").symlink_to("blobs")
    file = root / "cache/embeddings/embeddings.sqlite3"
    assert tracked_by_git([file]).paths == {file}


def test_paths_outside_any_work_tree_are_not_tracked(tmp_path: Path) -> None:
    assert tracked_by_git([tmp_path / "cache" / "embeddings.sqlite3"]).paths == frozenset()


@pytest.mark.slow
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_damaged_index_is_cannot_tell_never_an_error(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    root = _repository(tmp_path_factory.mktemp("r") / "repo", ["a/b.txt", "a/c.txt", "d.txt"])
    index = root / ".git" / "index"
    original = index.read_bytes()
    cut = data.draw(st.integers(min_value=0, max_value=len(original)))
    flips = data.draw(st.lists(st.integers(min_value=0, max_value=len(original) - 1), max_size=4))
    damaged = bytearray(original[:cut] + data.draw(st.binary(max_size=64)))
    for position in flips:
        if position < len(damaged):
            damaged[position] ^= 0xFF
    index.write_bytes(bytes(damaged))

    found = tracked_by_git([root / "a/b.txt", root / "zz"])

    assert found.unreadable is not None or found.paths <= {root / "a/b.txt"}


def test_a_folder_counts_when_git_tracks_anything_inside_it(tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo", ["store/chroma.sqlite3", "storey/x"])
    (root / "empty").mkdir()
    assert tracked_under(root / "store").paths == {root / "store"}
    assert tracked_under(root / "empty").paths == frozenset()
    assert tracked_under(root / "stor").paths == frozenset()  # a prefix of a name is not a folder
