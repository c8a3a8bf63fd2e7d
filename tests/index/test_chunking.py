from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer

from retrieval_eval.index.chunking import chunk_document, split_sections, word_spans
from retrieval_eval.index.model_install import default_model_dir
from retrieval_eval.load.documents import Document
from retrieval_eval.retrieval.builtin.dense import model_token_spans

LISBON = """# Trip to Lisbon
Five days in May.
## Budget
Flights 300 euros.
```bash
# a comment in a code block, not a heading
```
### Food budget
Pastel de nata: 1.20 each.
## Sights ##
Belém tower.
"""


def test_sections_keep_the_heading_path_and_ignore_headings_in_code() -> None:
    sections = split_sections(LISBON)
    assert [(s.path, s.body) for s in sections] == [
        (("Trip to Lisbon",), "Five days in May."),
        (
            ("Trip to Lisbon", "Budget"),
            "Flights 300 euros.\n```bash\n# a comment in a code block, not a heading\n```",
        ),
        (("Trip to Lisbon", "Budget", "Food budget"), "Pastel de nata: 1.20 each."),
        (("Trip to Lisbon", "Sights"), "Belém tower."),
    ]


def test_chunks_start_with_their_section_path() -> None:
    chunks = chunk_document(
        Document("travel/lisbon", "Trip to Lisbon", LISBON), max_tokens=64, overlap=4
    )
    assert [c.section for c in chunks] == [
        "Trip to Lisbon",
        "Trip to Lisbon > Budget",
        "Trip to Lisbon > Budget > Food budget",
        "Trip to Lisbon > Sights",
    ]
    assert chunks[2].text == "Trip to Lisbon > Budget > Food budget\nPastel de nata: 1.20 each."
    assert [c.id for c in chunks] == [f"travel/lisbon#{i}" for i in range(4)]


def test_a_title_not_among_the_headings_prefixes_every_chunk() -> None:
    doc = Document("n", "Lisbon 2024", "## Budget\nCheap.\n## Food\nGood.")
    assert [c.text for c in chunk_document(doc, max_tokens=64, overlap=4)] == [
        "Lisbon 2024 > Budget\nCheap.",
        "Lisbon 2024 > Food\nGood.",
    ]


def test_plain_text_that_already_starts_with_its_title_is_not_prefixed_twice() -> None:
    # Cranfield repeats each title at the start of the abstract.
    doc = Document("1", "wing in a slipstream .", "wing in a slipstream . an experimental study")
    (chunk,) = chunk_document(doc, max_tokens=64, overlap=4)
    assert chunk.text == "wing in a slipstream . an experimental study"
    assert chunk.section == ""


def test_long_sections_are_cut_into_overlapping_windows_within_the_cap() -> None:
    words = [f"w{i}" for i in range(100)]
    doc = Document("long", "", " ".join(words))
    chunks = chunk_document(doc, max_tokens=30, overlap=5)
    windows = [c.text.split() for c in chunks]
    assert windows[0] == words[0:30]
    assert windows[1] == words[25:55]
    assert windows[-1] == words[75:100]
    assert all(len(w) <= 30 for w in windows)


def test_the_context_line_counts_against_the_cap() -> None:
    doc = Document("d", "Title here", " ".join(f"w{i}" for i in range(40)))
    chunks = chunk_document(doc, max_tokens=20, overlap=2)
    assert all(len(c.text.split()) <= 20 for c in chunks)
    assert chunks[0].text.split()[:4] == ["Title", "here", "w0", "w1"]


def test_a_5_mb_document_becomes_many_capped_chunks() -> None:
    text = "# Log\n" + "the deploy failed again and we rolled back. " * 120_000
    assert len(text.encode()) > 5_000_000
    chunks = chunk_document(Document("log", "Log", text), max_tokens=254, overlap=32)
    # 960,000 words; windows of 253 (the cap less the "Log" line) advancing by 253 - 32:
    assert len(chunks) == 1 + -(-(960_000 - 253) // 221)
    assert max(len(word_spans(c.text)) for c in chunks) <= 254


def test_model_token_spans_keep_every_chunk_within_the_model_window() -> None:
    model_dir = default_model_dir(Path.home())
    spans = model_token_spans(model_dir)
    text = "Supersonic aerodynamics of delta-wings, re-examined. " * 200
    chunks = chunk_document(Document("a", "Aero", text), max_tokens=254, overlap=32, spans=spans)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    lengths = [len(tokenizer.encode(c.text, add_special_tokens=False).ids) for c in chunks]
    assert len(chunks) > 5
    assert max(lengths) <= 254
    assert min(lengths[:-1]) >= 200  # windows are filled, not cut short


def test_heading_only_document_is_still_one_chunk() -> None:
    (chunk,) = chunk_document(Document("h", "", "# Ideas\n## Later"), max_tokens=64, overlap=4)
    assert chunk.text == "# Ideas\n## Later"


@pytest.mark.parametrize("overlap", [15, 40])
def test_overlap_must_stay_below_half_the_cap(overlap: int) -> None:
    with pytest.raises(ValueError, match="overlap"):
        chunk_document(Document("d", "", "x"), max_tokens=30, overlap=overlap)


def test_a_title_without_text_is_indexed_once() -> None:
    """It was "title\ntitle": the title as the context line and again as the body."""
    chunks = chunk_document(
        Document("d", "Two Square-Root Approximations", ""), max_tokens=64, overlap=8
    )
    assert [(c.section, c.text) for c in chunks] == [("", "Two Square-Root Approximations")]
    (heading_only,) = chunk_document(Document("d", "Trip", "# Budget\n"), max_tokens=64, overlap=8)
    assert heading_only.text == "Trip\n# Budget"  # headings only: still titled, as before
