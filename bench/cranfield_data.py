"""Cranfield in BEIR layout for the benchmarks, unpacked once into .bench-data/ (git-ignored).

The collection ships gzipped in tests/data/cranfield; tests/data/cranfield.py unpacks it.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def cranfield_beir() -> Path:
    """The folder holding corpus.jsonl, queries.jsonl and qrels/test.tsv."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.data.cranfield import unpack_cranfield

    return unpack_cranfield(REPO / ".bench-data" / "cranfield-beir")
