"""The public contract for code that plugs a retriever into retrieval-eval.

A factory (``[retrievers.custom] factory = "module:function"``), a framework adapter or
any other code of a team's own imports what it needs from here, and only from here: the
modules these names are defined in are internal and may move between releases. What each
type means, and what the run does with each optional capability, is in docs/retrievers.md
("Writing a retriever").
"""

from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.base import (
    AnnFidelity,
    Closeable,
    Hit,
    MeasuresAnnFidelity,
    ReportsCollapse,
    ReportsMissingQueries,
    ReportsWarnings,
    Retriever,
    SearchesMany,
    SearchResult,
)

__all__ = [
    "AnnFidelity",
    "Closeable",
    "Corpus",
    "Document",
    "Hit",
    "MeasuresAnnFidelity",
    "ReportsCollapse",
    "ReportsMissingQueries",
    "ReportsWarnings",
    "Retriever",
    "SearchResult",
    "SearchesMany",
]
