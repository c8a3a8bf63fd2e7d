from __future__ import annotations

import gzip
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.load.input_files import GZIP_RATIO_FROM_BYTES
from retrieval_eval.load.jsonl_lines import Line, iter_jsonl_lines


def test_bom_crlf_blank_lines_and_missing_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n   \n{"b": 2}\n\n{"c": 3}')

    assert list(iter_jsonl_lines(path)) == [
        Line(1, '{"a": 1}'),
        Line(4, '{"b": 2}'),
        Line(6, '{"c": 3}'),
    ]


def test_an_over_long_line_is_reported_and_the_rest_still_read(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"x" * 5000 + b"\n" + b'{"ok": true}\n')

    assert list(iter_jsonl_lines(path, max_line_bytes=1000)) == [
        Line(1, "", "line is longer than 1,000 bytes; split the record or shorten it"),
        Line(2, '{"ok": true}'),
    ]


def test_invalid_utf8_is_reported_per_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": "\xc3\x28"}\n{"b": 1}\n')
    assert list(iter_jsonl_lines(path)) == [
        Line(1, "", "invalid UTF-8 at byte 8 of the line; save the file as UTF-8"),
        Line(2, '{"b": 1}'),
    ]


def test_a_10_mb_line_is_read_within_a_few_times_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    size = 10 * 1024 * 1024
    path.write_bytes(b'{"text": "' + b"a" * size + b'"}\n{"small": 1}\n')

    tracemalloc.start()
    try:
        lengths = [len(line.text) for line in iter_jsonl_lines(path)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lengths == [size + 12, 12]
    assert peak < 2.5 * size  # the raw bytes plus the decoded text, nothing more


@given(
    lines=st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
            max_size=20,
        )
    ),
    crlf=st.booleans(),
    bom=st.booleans(),
    final_newline=st.booleans(),
    gzipped=st.booleans(),
)
def test_yields_exactly_the_non_blank_lines_with_their_numbers(
    lines: list[str], crlf: bool, bom: bool, final_newline: bool, gzipped: bool
) -> None:
    ending = "\r\n" if crlf else "\n"
    content = ending.join(lines) + (ending if final_newline and lines else "")
    with tempfile.TemporaryDirectory() as folder:
        data = (b"\xef\xbb\xbf" if bom else b"") + content.encode("utf-8")
        path = Path(folder) / ("a.jsonl.gz" if gzipped else "a.jsonl")
        path.write_bytes(gzip.compress(data) if gzipped else data)
        expected = [
            Line(number, text)
            for number, text in enumerate(lines, start=1)
            if text and not text.isspace()
        ]
        assert list(iter_jsonl_lines(path)) == expected


@given(
    # No NUL: UTF-16's mark followed by U+0000 is byte for byte UTF-32's mark.
    lines=st.lists(
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")),
        max_size=5,
    ),
    encoding=st.sampled_from(["utf-16", "utf-32"]),
)
def test_utf16_and_utf32_files_are_one_problem_naming_the_encoding(
    lines: list[str], encoding: str
) -> None:
    """Every other byte of UTF-16 is NUL, valid UTF-8: such a file was reported as
    "invalid UTF-8 at byte 1" on line 1 and "not valid JSON" on every later line."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.jsonl"
        path.write_bytes("\r\n".join(lines).encode(encoding))
        name = encoding.upper()
        assert list(iter_jsonl_lines(path)) == [
            Line(
                1,
                "",
                f"the file is {name} text (it starts with a {name} byte-order mark); "
                "save it as UTF-8 (in PowerShell: Out-File -Encoding utf8)",
            )
        ]


@settings(max_examples=80, deadline=None)
@given(
    lines=st.lists(
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n")),
        max_size=40,
    ),
    level=st.integers(min_value=0, max_value=9),
)
def test_a_gzipped_file_within_its_bound_reads_as_the_plain_file(
    lines: list[str], level: int
) -> None:
    """The bound on what a ``.gz`` may inflate to changes nothing for an ordinary file."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    with tempfile.TemporaryDirectory() as folder:
        plain, packed = Path(folder, "a.jsonl"), Path(folder, "a.jsonl.gz")
        plain.write_bytes(data)
        packed.write_bytes(gzip.compress(data, compresslevel=level))
        assert list(iter_jsonl_lines(packed)) == list(iter_jsonl_lines(plain))


def test_a_gzipped_file_past_its_ratio_stops_with_the_file_named(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}\n' + b" " * (4 * GZIP_RATIO_FROM_BYTES)))

    with pytest.raises(InputError, match="decompresses to more than 100 times") as raised:
        list(iter_jsonl_lines(path))
    assert raised.value.file == str(path)
