"""The value every fusion function takes and returns: a ranked run."""

from __future__ import annotations

from collections.abc import Sequence

# (doc_id, score), best first; each document at most once.
Run = Sequence[tuple[str, float]]
