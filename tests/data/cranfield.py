"""The Cranfield collection in BEIR layout, unpacked from the gzipped copies beside this file.

Tests get it through the ``cranfield_beir`` fixture (tests/conftest.py); benchmarks and
scripts call :func:`unpack_cranfield` with a folder of their own. Nothing outside the
repository is read, so a fresh clone has everything it needs.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent / "cranfield"

# BEIR-layout path -> (gzipped file beside this module, sha256 of the unpacked bytes).
FILES: dict[str, tuple[str, str]] = {
    "corpus.jsonl": (
        "corpus.jsonl.gz",
        "9cd7529db77a591c645494e2683ee47c88863a287bdd7b631d98bcb5bb638ea3",
    ),
    "queries.jsonl": (
        "queries.jsonl.gz",
        "70914f4cee2b861959813356b008b8c61b78400e4de7e03193c3ea0cff72a63f",
    ),
    "qrels/test.tsv": (
        "qrels-test.tsv.gz",
        "1eea9d17af5fea31ca3a7a22c78b50fd6a8037484ab4389fe0f201b7d04a0cb5",
    ),
}


def unpack_cranfield(folder: Path) -> Path:
    """Write corpus.jsonl, queries.jsonl and qrels/test.tsv under ``folder``; return it.

    Files already there with the right content are kept, so callers may reuse a folder.
    Each file is checked against its recorded sha256, so a damaged copy fails loudly.
    """
    for relative, (packed, digest) in FILES.items():
        target = folder / relative
        if target.is_file() and _sha256(target.read_bytes()) == digest:
            continue
        data = gzip.decompress((HERE / packed).read_bytes())
        if _sha256(data) != digest:
            raise RuntimeError(f"{HERE / packed} does not unpack to the recorded Cranfield file")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.write_bytes(data)
        partial.replace(target)
    return folder


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
