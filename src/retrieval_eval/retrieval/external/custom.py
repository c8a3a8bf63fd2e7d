"""The user's own system: a Python factory or a command (see command.py).

A factory's module is code from the repository, and so from the pull request
under review: it must not share a process with the token. So the factory runs
in a child of its own (``factory_host.py``), started as a command retriever is
(the environment less the secrets, a process group of its own, every exchange
bounded by ``timeout_s``), and its retriever is spoken to over the same JSON
lines. Its failures (an exception, ``sys.exit()``, a call that never returns,
a malformed answer) become one-line errors naming the factory, and its results
are checked and ordered like every other retriever's.

The module is imported from the repository (``cwd``, the run's directory, else
the current directory), which is put first on the child's ``sys.path``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import Retriever
from retrieval_eval.retrieval.config import CustomConfig
from retrieval_eval.retrieval.external.command import (
    CommandRetriever,
    index_documents,
    search_batch,
)

# ``-P``: the child's current directory is not put on ``sys.path`` before the host's own
# imports, so a repository's ``json.py`` cannot stand in for the standard library's.
HOST_COMMAND = (sys.executable, "-P", "-m", "retrieval_eval.retrieval.external.factory_host")

# What each request asks of the user's code, as the errors name it.
_CALLS = {
    "import": "import",
    "factory": "the factory",
    "index": "index()",
    "search": "search()",
    "search_many": "search_many()",
    "rerank": "rerank()",
    "describe": "describe()",
    "close": "close()",
}


def build_custom(config: CustomConfig) -> Retriever:
    if config.command is not None:
        return CommandRetriever(config.command, cwd=config.cwd, timeout_s=config.timeout_s)
    assert config.python is not None  # CustomConfig guarantees exactly one
    return HostedFactory(
        config.python,
        config.options,
        kind="retriever",
        cwd=config.cwd,
        timeout_s=config.timeout_s,
        setting="retrievers.custom.timeout_s",
        config_label=f"retrievers.custom.python = {config.python!r}",
        label=f"custom retriever {config.python}",
    )


class HostedFactory(CommandRetriever):
    """The object ``factory(**options)`` returned, living in a child process."""

    def __init__(
        self,
        spec: str,
        options: Mapping[str, object],
        *,
        kind: str,
        cwd: Path | None,
        timeout_s: float,
        setting: str,
        config_label: str,
        label: str,
    ) -> None:
        super().__init__(HOST_COMMAND, cwd=cwd, timeout_s=timeout_s)
        self.spec = spec
        self.setting = setting
        self.label = config_label  # until the factory has answered
        self._described_here: dict[str, Any] = {}
        self._made = False  # the factory has answered: the child holds its object
        self._ended = False  # the child has been stopped, and must not be restarted
        root = str((cwd or Path.cwd()).resolve())
        try:
            self._ask("import", {"op": "import", "spec": spec, "root": root})
            answer = self._ask("factory", {"op": "factory", "options": dict(options), "kind": kind})
        except BaseException:
            self.close()
            raise
        self.name = str(answer.get("name") or "custom")
        self.label = label
        self._made = True

    # --- the Retriever protocol (search and the pipe are CommandRetriever's) ----------

    def index(self, corpus: Corpus) -> None:
        documents = index_documents(corpus, source=True)
        answer = self._ask("index", {"op": "index", "documents": documents})
        self._described_here = _described(answer, self.label)
        self._batch = search_batch(answer.get("batch"), self.label)

    def describe(self) -> Mapping[str, object]:
        return {"retriever": "custom", "python": self.spec, **self.described()}

    def described(self) -> dict[str, Any]:
        """What the user's ``describe()`` says now (what it said last, once the child is gone)."""
        if self._process is not None:
            self._described_here = _described(self._ask("describe", {"op": "describe"}), self.label)
        return self._described_here

    def close(self) -> None:
        """The user's ``close()``, if the child still holds the object; then the child goes."""
        asking = self._made and not self._ended and self._process is not None
        self._ended = True
        try:
            if asking:
                self._ask("close", {"op": "close"})
        finally:
            super().close()

    # --- how the pipe's failures read -------------------------------------------------

    def _start(self) -> Any:
        if self._ended:  # a fresh child would hold no factory object: never restart
            raise RetrievalEvalError(f"{self.label}: skipped, an earlier call failed or timed out")
        return super()._start()

    def _reported(self, op: str, answer: Mapping[str, Any]) -> RetrievalEvalError:
        error = ConfigError if answer.get("config") is True else RetrievalEvalError
        return error(f"{self.label}: {answer['error']}")

    def _exited(self, op: str) -> RetrievalEvalError:
        self._ended = True
        return super()._exited(op)

    def _timed_out(self, op: str, what: str) -> RetrievalEvalError:
        self._ended = True
        super()._timed_out(op, what)
        return RetrievalEvalError(
            f"{self.label}: {_CALLS.get(op, op)} did not return within {self.timeout_s:g} s "
            f"(raise {self.setting} if it is just slow)"
        )


def _described(answer: Mapping[str, Any], label: str) -> dict[str, Any]:
    describe = answer.get("describe", {})
    if not isinstance(describe, dict):
        raise RetrievalEvalError(f"{label}: describe() must return a mapping")
    return describe
