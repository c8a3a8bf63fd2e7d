from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

# A fresh interpreter: this test process may already hold numba or scipy.
PROBE = """
import sys
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.builtin.bm25 import Bm25Retriever
from retrieval_eval.retrieval.config import Bm25Config

retriever = Bm25Retriever(Bm25Config())
retriever.index(Corpus(documents=(Document("a", "", "apple banana"), Document("b", "", "cherry")),
                location="fruit"))
hits = [hit.doc_id for hit in retriever.search("apple", 10).hits]
print(hits, "numba" in sys.modules, "scipy" in sys.modules, "asyncio" in sys.modules)
"""


def _probe(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_bm25_searches_without_importing_numba_scipy_or_asyncio() -> None:
    assert _probe(PROBE) == "['a'] False False False"


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba not installed")
def test_numba_stays_importable_after_bm25s() -> None:
    code = PROBE + "\nimport numba, scipy.sparse\nprint('numba' in sys.modules)\n"
    assert _probe(code).splitlines()[-1] == "True"


def test_a_numba_imported_first_is_kept() -> None:
    if importlib.util.find_spec("numba") is None:
        pytest.skip("numba not installed")
    assert _probe("import numba\n" + PROBE).split()[-3:-1] == ["True", "True"]
