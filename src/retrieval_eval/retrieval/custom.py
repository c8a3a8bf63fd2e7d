"""The user's own system: a Python factory or a command (see command.py).

A factory's retriever is wrapped so that its exceptions and malformed answers
become one-line errors naming the factory, and its results get the same
ordering guarantees as the built-in retrievers.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.answers import normalise_hits
from retrieval_eval.retrieval.base import Retriever, SearchResult
from retrieval_eval.retrieval.command import CommandRetriever
from retrieval_eval.retrieval.config import CustomConfig


def build_custom(config: CustomConfig) -> Retriever:
    if config.command is not None:
        return CommandRetriever(config.command, cwd=config.cwd, timeout_s=config.timeout_s)
    assert config.python is not None  # CustomConfig guarantees exactly one
    return FactoryRetriever(config.python, load_factory(config.python, config.options))


def load_factory(spec: str, options: Mapping[str, object]) -> Retriever:
    label = f"retrievers.custom.python = {spec!r}"
    retriever = call_factory(spec, options, label=label)
    if not isinstance(retriever, Retriever):
        raise ConfigError(
            f"{label}: the factory returned {type(retriever).__name__}, which lacks the Retriever "
            "protocol (name, index(corpus), search(query, k, tags), describe())"
        )
    return retriever


def call_factory(spec: str, options: Mapping[str, object], *, label: str) -> object:
    """Import ``module:callable`` and call it with ``options`` as keyword arguments."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"{label}: cannot import {module_name} ({error})") from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ConfigError(f"{label}: {module_name} has no callable {attribute}")
    try:
        return factory(**options)
    except Exception as error:
        raise RetrievalEvalError(
            f"{label}: the factory raised {type(error).__name__}: {error}"
        ) from error


class FactoryRetriever:
    def __init__(self, spec: str, inner: Retriever):
        self.spec = spec
        self.inner = inner
        self.name = inner.name if isinstance(inner.name, str) and inner.name else "custom"
        self.label = f"custom retriever {spec}"

    def index(self, corpus: Corpus) -> None:
        try:
            self.inner.index(corpus)
        except RetrievalEvalError:
            raise
        except Exception as error:
            raise RetrievalEvalError(
                f"{self.label}: index() raised {type(error).__name__}: {error}"
            ) from error

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        try:
            result = self.inner.search(query, k, tags)
        except RetrievalEvalError:
            raise
        except Exception as error:
            raise RetrievalEvalError(
                f"{self.label}: search() raised {type(error).__name__}: {error}"
            ) from error
        if not isinstance(result, SearchResult):
            raise RetrievalEvalError(
                f"{self.label}: search() returned {type(result).__name__}, expected a SearchResult"
            )
        return normalise_hits(result.hits, k, cost_usd=result.cost_usd, who=self.label)

    def describe(self) -> Mapping[str, object]:
        return {"retriever": "custom", "python": self.spec, **dict(self.inner.describe())}

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()
