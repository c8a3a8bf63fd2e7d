"""The corpus as every later stage sees it, whatever format it was loaded from."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Document:
    """One retrievable unit: a note, a JSONL record or a BEIR passage.

    ``source`` is where it came from (``path`` or ``path:line``), so errors about
    a document can point the user at the file to fix.
    """

    id: str
    title: str
    text: str
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""


@dataclass(frozen=True)
class Corpus:
    """A loaded corpus.

    ``skipped_empty`` lists ids of empty documents that were left out (``retrieval-eval
    validate`` warns about them); they still count as existing when datasets are checked
    against the corpus.
    """

    documents: tuple[Document, ...]
    location: str
    skipped_empty: tuple[str, ...] = ()

    def ids(self) -> frozenset[str]:
        return frozenset(doc.id for doc in self.documents)

    def tags(self) -> frozenset[str]:
        return frozenset(tag for doc in self.documents for tag in doc.tags)

    def fingerprint(self) -> str:
        """sha256 over the documents' content, independent of load order, so the
        baseline can tell "the corpus changed" from "the retriever changed"."""
        digest = hashlib.sha256()
        for doc in sorted(self.documents, key=lambda d: d.id):
            record = [doc.id, doc.title, doc.text, sorted(doc.tags)]
            digest.update(json.dumps(record, ensure_ascii=False).encode("utf-8"))
            digest.update(b"\n")
        return digest.hexdigest()
