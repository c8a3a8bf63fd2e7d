"""The error `generate` raises when the model's answer or the API failed.

Its Messages API calls go through ``score/cached_claude.py`` (reply cache, cost cap),
which the run's label judgements share.
"""

from __future__ import annotations

from retrieval_eval.errors import RetrievalEvalError


class GenerateError(RetrievalEvalError):
    """The model's answer or the API failed; nothing half-made is written."""
