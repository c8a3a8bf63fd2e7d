"""Every text file written (reports, baselines) is valid UTF-8: a lone surrogate, which
has no UTF-8 encoding, is written as U+FFFD and every other character as it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.fileio import atomic_write_text

LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        st.one_of(
            st.characters(codec="ascii"),
            st.characters(),  # any code point, lone surrogates (category Cs) included
        ),
        max_size=40,
    )
)
def test_written_text_is_the_text_with_lone_surrogates_replaced(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    path: Path = tmp_path_factory.mktemp("written") / "report.json"
    atomic_write_text(path, text)
    assert path.read_bytes() == LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
