"""``[retrievers.langchain]`` and ``[retrievers.llamaindex]``: a framework's retriever, by
reference (``object = "module:attribute"``), evaluated in the factory host.

The object is the team's code, so it runs where a custom factory runs: in a child process
of its own, away from the run's secrets (custom.py). The host is asked to build our
adapter (``<framework>_adapter:adapter``), which builds the team's object once and
searches a dataset's queries in batches (framework.py).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import FrameworkConfig
from retrieval_eval.retrieval.external.custom import HostedFactory

FRAMEWORKS: tuple[str, ...] = ("langchain", "llamaindex")
COLLAPSED = "collapsed"  # the key of the adapter's describe() holding its counts
# The package each framework's retriever type comes from, and the extra that installs it.
_PACKAGE = {
    "langchain": ("langchain_core", "langchain-core"),
    "llamaindex": ("llama_index.core", "llama-index-core"),
}


class FrameworkHosted(HostedFactory):
    """The adapter living in the factory host, recorded as the framework's retriever."""

    def __init__(self, framework: str, table: FrameworkConfig) -> None:
        self.framework = framework
        self.table = table
        options: dict[str, Any] = {"object": table.object, "id_key": table.id_key}
        if table.score_key is not None:
            options["score_key"] = table.score_key
        if table.tag_key is not None:
            options["tag_key"] = table.tag_key
        if table.options:
            options["options"] = dict(table.options)
        super().__init__(
            f"retrieval_eval.retrieval.external.{framework}_adapter:adapter",
            options,
            kind="retriever",
            cwd=table.cwd,
            timeout_s=table.timeout_s,
            setting=f"retrievers.{framework}.timeout_s",
            config_label=f"retrievers.{framework}.object = {table.object!r}",
            label=f"retrievers.{framework} ({table.object})",
        )

    def describe(self) -> Mapping[str, object]:
        described = dict(self.described())
        described.pop(COLLAPSED, None)  # a count, not a setting: logged, never recorded
        return {"retriever": self.framework, **described}

    def collapsed(self) -> dict[int, int]:
        """Documents by how many results stood behind them, since the object was built."""
        counts = self.described().get(COLLAPSED) or {}
        return {int(n): int(documents) for n, documents in counts.items()}


def build_framework(name: str, table: FrameworkConfig | None) -> FrameworkHosted:
    if table is None:
        raise ConfigError(
            f'retriever `{name}` needs a [retrievers.{name}] table with object = "module:attribute"'
        )
    module, package = _PACKAGE[name]
    if _missing(module):
        raise ConfigError(
            f"retrievers.{name}: {package} is not installed where the factory host runs: "
            f"pip install 'retrieval-eval[{name}]' into the environment retrieval-eval runs in"
        )
    return FrameworkHosted(name, table)


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:  # the parent package is missing, or cannot be imported
        return True
