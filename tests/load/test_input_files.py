"""Opening an input file from the pull request: never outside the repository, never a
FIFO or a device, never more than a gzip of its size can honestly hold."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.load.input_files import (
    GZIP_RATIO_FROM_BYTES,
    MAX_GZIP_RATIO,
    UTF8_BOM,
    check_inside,
    check_regular,
    open_maybe_gzipped,
    read_input_bytes,
    read_regular_bytes,
    reading_within,
    too_many_lines,
    wide_encoding_problem,
)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "corpus.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as caught:
        read_input_bytes(fifo)
    assert str(caught.value) == (
        f"{fifo}: is a FIFO (named pipe), not a regular file; refusing to read it"
    )


def test_a_device_or_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a character device, not a regular file"):
        read_input_bytes(Path("/dev/zero"))
    with pytest.raises(InputError, match="cannot read file: Is a directory"):
        check_regular(tmp_path)
    with pytest.raises(InputError, match="cannot read: No such file or directory"):
        check_regular(tmp_path / "missing.jsonl")


def test_within_the_roots_a_link_out_is_refused_and_outside_a_run_anything_goes(
    tmp_path: Path,
) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    (repository / "inside.md").write_text("ok", encoding="utf-8")
    (repository / "environ.md").symlink_to("/proc/self/environ")
    with reading_within([repository]):
        assert read_input_bytes(repository / "inside.md") == b"ok"
        with pytest.raises(InputError) as caught:
            read_input_bytes(repository / "environ.md")
        assert "outside the repository" in str(caught.value)
        assert "name its folder in `outside_roots` in retrieval-eval.toml" in str(caught.value)
    check_inside(repository / "environ.md")  # no run: no roots to check against


def test_a_bounded_read_refuses_a_larger_file_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_bytes(b"x" * 10)
    assert read_regular_bytes(path, max_bytes=10, what="baseline") == b"x" * 10
    with pytest.raises(InputError) as caught:
        read_regular_bytes(path, max_bytes=9, what="baseline")
    assert str(caught.value) == (
        f"{path}: is 10 bytes, more than any baseline holds (9 at most); refusing to read it"
    )
    with pytest.raises(InputError, match="is a character device, not a regular file"):
        read_regular_bytes(Path("/dev/zero"), max_bytes=9, what="baseline")


def test_a_bounded_read_leaves_the_roots_rule_to_open_input(tmp_path: Path) -> None:
    """The baseline the Action reads is a scratch copy outside the repository."""
    repository, scratch = tmp_path / "repo", tmp_path / "scratch.json"
    repository.mkdir()
    scratch.write_bytes(b"{}")
    with reading_within([repository]):
        assert read_regular_bytes(scratch, max_bytes=2, what="baseline") == b"{}"
        with pytest.raises(InputError, match="outside the repository"):
            read_input_bytes(scratch)


def test_a_gzip_reads_as_the_plain_file(tmp_path: Path) -> None:
    text = b'{"id": "a"}\n' * 50
    packed = tmp_path / "corpus.jsonl.gz"
    packed.write_bytes(gzip.compress(text))
    with open_maybe_gzipped(packed) as handle:
        assert handle.read() == text


def test_a_gzip_bomb_is_refused_once_it_inflates_past_the_ratio(tmp_path: Path) -> None:
    bomb = tmp_path / "corpus.jsonl.gz"
    size = GZIP_RATIO_FROM_BYTES + (1 << 20)
    bomb.write_bytes(gzip.compress(b"\0" * size, compresslevel=9))
    assert bomb.stat().st_size * MAX_GZIP_RATIO < size
    with open_maybe_gzipped(bomb) as handle, pytest.raises(InputError) as caught:
        handle.read()
    assert str(caught.value) == (
        f"{bomb}: decompresses to more than {MAX_GZIP_RATIO} times its compressed size, which "
        "no real corpus or dataset does (a gzip bomb?); refusing to read on: store it "
        "uncompressed, or split it"
    )


def test_too_many_lines_says_the_bound_and_what_to_do() -> None:
    assert str(too_many_lines(Path("big.jsonl"), 1_000)) == (
        "big.jsonl: has more than 1,000 lines (blank lines included), more than retrieval-eval "
        "reads from one file; split it or remove the blank lines"
    )


@pytest.mark.parametrize(
    ("head", "encoding"),
    [
        (b"\xff\xfe\x00\x00{", "UTF-32"),
        (b"\x00\x00\xfe\xff", "UTF-32"),
        (b"\xff\xfe{\x00", "UTF-16"),
        (b"\xfe\xff\x00{", "UTF-16"),
    ],
)
def test_a_utf16_or_utf32_file_is_named(head: bytes, encoding: str) -> None:
    assert wide_encoding_problem(head) == (
        f"the file is {encoding} text (it starts with a {encoding} byte-order mark); "
        "save it as UTF-8 (in PowerShell: Out-File -Encoding utf8)"
    )


@given(st.text(max_size=30))
def test_utf8_text_is_never_taken_for_a_wide_encoding(text: str) -> None:
    data = text.encode("utf-8", errors="surrogatepass")
    assert wide_encoding_problem(data) is None
    assert wide_encoding_problem(UTF8_BOM + data) is None
