"""The user's own system: a Python factory or a command (see command.py).

A factory's retriever is wrapped so that its exceptions and malformed answers
become one-line errors naming the factory, and its results get the same
ordering guarantees as the built-in retrievers.

The factory's module is imported from the repository (``cwd``, the run's
directory), which is put on ``sys.path``: the console script's own path holds
only its bin folder. The factory and every call into its retriever run on one
worker thread of their own, so that each is bounded by ``timeout_s`` and a
``sys.exit()`` in them becomes an error instead of ending the run silently.
"""

from __future__ import annotations

import importlib
import queue
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.answers import normalise_hits
from retrieval_eval.retrieval.base import Retriever, SearchResult
from retrieval_eval.retrieval.command import CommandRetriever
from retrieval_eval.retrieval.config import CustomConfig

T = TypeVar("T")


def build_custom(config: CustomConfig) -> Retriever:
    if config.command is not None:
        return CommandRetriever(config.command, cwd=config.cwd, timeout_s=config.timeout_s)
    assert config.python is not None  # CustomConfig guarantees exactly one
    worker = BoundedWorker(config.timeout_s)
    inner = load_factory(config.python, config.options, root=config.cwd, worker=worker)
    return FactoryRetriever(config.python, inner, worker)


class _Exited(Exception):
    def __init__(self, code: object) -> None:
        super().__init__(code)
        self.code = code


class BoundedWorker:
    """One daemon thread that runs the user's calls one at a time, each within ``timeout_s``.

    One thread for every call, because a retriever may hold objects (a SQLite
    connection) usable only from the thread that made them. A daemon, so a call
    that never returns cannot keep the process from exiting once it is abandoned.
    """

    def __init__(self, timeout_s: float, setting: str = "retrievers.custom.timeout_s") -> None:
        self.timeout_s = timeout_s
        self.setting = setting  # what the user raises when a call is just slow
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[Any]]] = (
            queue.SimpleQueue()
        )
        self._hung = False
        threading.Thread(target=self._serve, daemon=True, name="custom-retriever").start()

    def _serve(self) -> None:
        while True:
            job, answer = self._jobs.get()
            try:
                answer.put((True, job()))
            except SystemExit as exit_request:  # a thread would swallow it silently
                answer.put((False, _Exited(exit_request.code)))
            except BaseException as error:  # handed to the caller, who decides
                answer.put((False, error))

    def call(self, job: Callable[[], T], what: str) -> T:
        """``job()``'s result; its exception re-raised; RetrievalEvalError on a timeout."""
        if self._hung:
            raise RetrievalEvalError(f"{what}: skipped, an earlier call never returned")
        answer: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._jobs.put((job, answer))
        try:
            ok, value = answer.get(timeout=self.timeout_s)
        except queue.Empty:
            self._hung = True
            raise RetrievalEvalError(
                f"{what} did not return within {self.timeout_s:g} s "
                f"(raise {self.setting} if it is just slow)"
            ) from None
        if ok:
            return value  # type: ignore[no-any-return]
        if isinstance(value, _Exited):
            raise RetrievalEvalError(
                f"{what} called sys.exit({value.code!r}); a retriever must raise an exception "
                "or return, never end the process"
            )
        raise value


def _importable_from(root: Path | None) -> None:
    if root is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))
        importlib.invalidate_caches()


def load_factory(
    spec: str,
    options: Mapping[str, object],
    *,
    root: Path | None = None,
    worker: BoundedWorker | None = None,
) -> Retriever:
    label = f"retrievers.custom.python = {spec!r}"
    retriever = call_factory(spec, options, label=label, root=root, worker=worker)
    if not isinstance(retriever, Retriever):
        raise ConfigError(
            f"{label}: the factory returned {type(retriever).__name__}, which lacks the Retriever "
            "protocol (name, index(corpus), search(query, k, tags), describe())"
        )
    return retriever


def call_factory(
    spec: str,
    options: Mapping[str, object],
    *,
    label: str,
    root: Path | None = None,
    worker: BoundedWorker | None = None,
) -> object:
    """Import ``module:callable`` (from ``root`` first) and call it with ``options`` as
    keyword arguments, both on ``worker``: bounded in time, and ``sys.exit`` an error."""
    module_name, _, attribute = spec.partition(":")
    worker = worker or BoundedWorker(120.0)
    _importable_from(root)
    try:
        module = worker.call(lambda: importlib.import_module(module_name), f"{label}: import")
    except ImportError as error:
        raise ConfigError(f"{label}: cannot import {module_name} ({error})") from None
    except RetrievalEvalError:
        raise
    except Exception as error:
        raise RetrievalEvalError(
            f"{label}: importing {module_name} raised {type(error).__name__}: {error}"
        ) from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ConfigError(f"{label}: {module_name} has no callable {attribute}")
    try:
        return worker.call(lambda: factory(**options), f"{label}: the factory")
    except RetrievalEvalError:
        raise
    except Exception as error:
        raise RetrievalEvalError(
            f"{label}: the factory raised {type(error).__name__}: {error}"
        ) from error


class FactoryRetriever:
    def __init__(self, spec: str, inner: Retriever, worker: BoundedWorker | None = None):
        self.spec = spec
        self.inner = inner
        self.worker = worker or BoundedWorker(120.0)
        self.name = inner.name if isinstance(inner.name, str) and inner.name else "custom"
        self.label = f"custom retriever {spec}"

    def index(self, corpus: Corpus) -> None:
        try:
            self.worker.call(lambda: self.inner.index(corpus), f"{self.label}: index()")
        except RetrievalEvalError:
            raise
        except Exception as error:
            raise RetrievalEvalError(
                f"{self.label}: index() raised {type(error).__name__}: {error}"
            ) from error

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        try:
            result = self.worker.call(
                lambda: self.inner.search(query, k, tags), f"{self.label}: search()"
            )
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
            self.worker.call(close, f"{self.label}: close()")
