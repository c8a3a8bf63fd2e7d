"""How texts are grouped into model calls: a bound on texts and on token positions.

Kept apart from the model code (no onnxruntime import) so the settings can name the
defaults without loading the model's libraries.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

DEFAULT_BATCH_SIZE = 64
# Most token positions (texts × padded length) one model call may hold. Attention keeps
# batch × 12 heads × length² floats per layer, so this bounds a batch's memory whatever
# the text lengths: 2,048 positions is 8 full-length texts or 64 texts of 32 tokens.
# Peak RSS embedding 256-token passages with the model alone: 803 MB at 64 × 256
# positions, 535 MB at 2,048 (docs/benchmarks.md, "Memory").
DEFAULT_TOKEN_BUDGET = 2048


def token_batches(
    sorted_lengths: npt.NDArray[np.int64], batch_size: int, token_budget: int
) -> list[slice]:
    """Consecutive slices of length-sorted texts, each at most ``batch_size`` texts whose
    count × longest length stays within ``token_budget`` (a single text always fits)."""
    batches: list[slice] = []
    start = 0
    total = len(sorted_lengths)
    while start < total:
        end = start + 1
        while (
            end < total
            and end - start < batch_size
            and (end - start + 1) * int(sorted_lengths[end]) <= token_budget
        ):
            end += 1
        batches.append(slice(start, end))
        start = end
    return batches
