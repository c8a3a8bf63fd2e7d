"""What `retrieval-eval init` adds to `.gitignore`: appended, never duplicated, the
user's lines kept byte for byte."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.author.scaffold import add_gitignore, gitignore_lines
from tests.author.cli import retrieval_eval

ENTRIES = ("retrieval-eval-report/", ".retrieval-eval-cache/")


def test_init_appends_the_report_and_cache_folders_to_gitignore(tmp_path: Path) -> None:
    users = b"node_modules\r\n# mine\n*.log"  # CRLF, a comment, no final newline
    (tmp_path / ".gitignore").write_bytes(users)

    first = retrieval_eval("init", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert ".gitignore: appended retrieval-eval-report/, .retrieval-eval-cache/" in first.stdout
    text = (tmp_path / ".gitignore").read_bytes()
    assert text.startswith(users + b"\n")
    assert [line for line in text.decode().splitlines() if line in ENTRIES] == list(ENTRIES)

    again = retrieval_eval("init", cwd=tmp_path)
    assert ".gitignore: unchanged" in again.stdout
    assert (tmp_path / ".gitignore").read_bytes() == text


def test_init_writes_gitignore_when_there_is_none_and_respects_existing_entries(
    tmp_path: Path,
) -> None:
    assert retrieval_eval("init", cwd=tmp_path).returncode == 0
    assert set(ENTRIES) <= set((tmp_path / ".gitignore").read_text().splitlines())

    other = tmp_path / "other"
    other.mkdir()
    (other / ".gitignore").write_text("/retrieval-eval-report\n")
    assert retrieval_eval("init", cwd=other).returncode == 0
    lines = (other / ".gitignore").read_text().splitlines()
    assert lines.count("/retrieval-eval-report") == 1
    assert "retrieval-eval-report/" not in lines  # already ignored, in the user's spelling
    assert ".retrieval-eval-cache/" in lines


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_appending_keeps_every_byte_and_never_duplicates(existing: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".gitignore").write_bytes(existing)
        add_gitignore(root)
        once = (root / ".gitignore").read_bytes()
        add_gitignore(root)
        assert (root / ".gitignore").read_bytes() == once
        assert once.startswith(existing)
        have = {line.strip().strip(b"/") for line in once.splitlines()}
        assert {entry.strip("/").encode() for entry in gitignore_lines()} <= have
