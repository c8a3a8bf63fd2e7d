"""bm25s, imported without numba, scipy and tqdm's asyncio bar.

bm25s imports numba and scipy whenever they are installed (another package may have
brought them), although the numpy backends we use (``backend="numpy"``,
``csc_backend="numpy"``, its defaults, which ``bm25.py`` passes explicitly) run
without either; importing the two costs a run about a CPU-second. Hidden from
bm25s's import, they take its "not installed" branch; scores are the numpy
backend's either way. Something that imported them first keeps them. The same goes
for ``tqdm.auto`` (with it tqdm and asyncio, about 0.05 CPU-second): we never ask
bm25s for its progress bars, and without tqdm it draws none.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

# What bm25s imports when installed and never needs with its numpy backends and
# show_progress=False.
UNUSED_BY_BM25S = ("numba", "scipy", "scipy.sparse", "tqdm.auto")


def import_bm25s() -> ModuleType:
    """The bm25s package (a ``None`` in ``sys.modules`` makes ``import numba`` raise
    ImportError, which bm25s catches)."""
    if "bm25s" in sys.modules:
        return sys.modules["bm25s"]
    hidden = [name for name in UNUSED_BY_BM25S if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        return importlib.import_module("bm25s")
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
