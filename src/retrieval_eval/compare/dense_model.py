"""The run's embedding model, chosen once the corpus is loaded and before it is indexed.

``[retrievers.dense] model = "auto"`` depends on the corpus size and on the model the
baseline's retrievers recorded (``retrieval.defaults.choose_dense_model``); every command
that indexes the corpus with the dense model resolves it here, in the same way, so
`run`, its shards, `embed`, `compare` and `tune` all embed with the same model.
"""

from __future__ import annotations

from collections.abc import Collection

from retrieval_eval.compare.baseline import models_recorded_at
from retrieval_eval.load.documents import Corpus
from retrieval_eval.progress import Log
from retrieval_eval.retrieval.config import RetrieversConfig
from retrieval_eval.retrieval.defaults import (
    EMBEDDING_RETRIEVERS,
    DenseModelChoice,
    choose_dense_model,
    with_dense_model,
)
from retrieval_eval.settings import RunSettings


def resolve_dense_model(
    settings: RunSettings, *, documents: int, recorded: Collection[str] = ()
) -> tuple[RunSettings, DenseModelChoice | None]:
    """``settings`` with ``"auto"`` resolved in the run's retrievers and in every
    challenger's (the same rule, on the same corpus and baseline), and the run's choice
    when one of its retrievers embeds with it (None otherwise: nothing to report)."""
    choice = choose_dense_model(settings.retrievers, documents=documents, recorded=recorded)
    retrievers = with_dense_model(settings.retrievers, choice.model)
    challengers = {
        name: challenger.model_copy(
            update={
                "retrievers": with_dense_model(
                    challenger.retrievers,
                    choose_dense_model(
                        challenger.retrievers, documents=documents, recorded=recorded
                    ).model,
                )
            }
        )
        for name, challenger in settings.challengers.items()
    }
    resolved = settings.model_copy(update={"retrievers": retrievers, "challengers": challengers})
    used = {*settings.dataset_retrievers.values(), *(c.retriever for c in challengers.values())}
    return resolved, (choice if used & EMBEDDING_RETRIEVERS else None)


def choose_run_model(
    settings: RunSettings, corpus: Corpus, recorded: set[str], log: Log
) -> tuple[RunSettings, str | None]:
    """``settings`` with ``[retrievers.dense] model = "auto"`` resolved for this corpus and
    baseline, once, before anything is indexed; and the report's line saying which model
    and why (None when no retriever of the run embeds)."""
    resolved, choice = resolve_dense_model(
        settings, documents=len(corpus.documents), recorded=recorded
    )
    if choice is None:
        return resolved, None
    log(f"dense model: {choice.line}; the corpus has {len(corpus.documents):,} documents")
    return resolved, choice.line


def retrievers_for(settings: RunSettings, corpus: Corpus) -> RetrieversConfig:
    """``settings.retrievers`` with the dense model `run` would choose for ``corpus``, for
    the commands that search with a retriever without reporting on it."""
    recorded = models_recorded_at(settings.baseline)
    return choose_run_model(settings, corpus, recorded, lambda _: None)[0].retrievers
