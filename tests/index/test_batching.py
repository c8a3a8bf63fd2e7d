"""Model calls stay within the text count and the token budget, whatever the lengths."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.index.batching import MAX_PADDING, token_batches


@settings(deadline=None)
@given(
    lengths=st.lists(st.integers(1, 256), max_size=300),
    batch_size=st.integers(1, 64),
    budget=st.integers(256, 16384),
)
def test_batches_cover_every_text_once_within_both_bounds(
    lengths: list[int], batch_size: int, budget: int
) -> None:
    ordered = np.sort(np.array(lengths, dtype=np.int64))
    batches = token_batches(ordered, batch_size, budget)
    covered = [i for span in batches for i in range(len(ordered))[span]]
    assert covered == list(range(len(ordered)))
    for span in batches:
        members = ordered[span]
        assert 1 <= len(members) <= batch_size
        # A text longer than the budget allows still goes, alone.
        assert len(members) == 1 or len(members) * int(members.max()) <= budget
        # Padding to the longest member costs at most MAX_PADDING times the members' tokens.
        assert len(members) == 1 or len(members) * int(members.max()) <= MAX_PADDING * int(
            members.sum()
        )
    # A batch closes only when the next text breaks a bound.
    for span, following in itertools.pairwise(batches):
        grown = ordered[span.start : following.start + 1]
        assert (
            len(grown) > batch_size
            or len(grown) * int(grown.max()) > budget
            or len(grown) * int(grown.max()) > MAX_PADDING * int(grown.sum())
        )
