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
# A call costs its padded positions (texts × its longest text), so a batch closes before
# they would pass this many times its texts' own tokens: sorted by length, a dataset's
# queries still run from 5 to 21 tokens, and one padded call for all of them spent twice
# the positions they hold (5.0 ms CPU a query on this repository's 52, 3.4 ms so bounded).
# Padding is masked out of attention and pooling: the vectors are the same either way.
MAX_PADDING = 1.25


def token_batches(
    sorted_lengths: npt.NDArray[np.int64], batch_size: int, token_budget: int
) -> list[slice]:
    """Consecutive slices of length-sorted texts, each at most ``batch_size`` texts whose
    count × longest length stays within ``token_budget`` and within ``MAX_PADDING`` times
    their total length (a single text always fits)."""
    batches: list[slice] = []
    start = 0
    total = len(sorted_lengths)
    while start < total:
        end = start + 1
        tokens = int(sorted_lengths[start])
        while end < total and end - start < batch_size:
            longest = int(sorted_lengths[end])
            positions = (end - start + 1) * longest
            if positions > token_budget or positions > MAX_PADDING * (tokens + longest):
                break
            tokens += longest
            end += 1
        batches.append(slice(start, end))
        start = end
    return batches
