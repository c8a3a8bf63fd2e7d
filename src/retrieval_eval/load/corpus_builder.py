"""The rules every corpus format shares, applied in one place.

Whatever the source (JSONL, BEIR, Markdown, Bear), a duplicate id must name
both places it was defined, and an empty document is skipped rather than indexed as
noise, and counted (``retrieval-eval validate`` warns about it; a dataset may still
name it).
"""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.errors import InputError
from retrieval_eval.load.documents import Corpus, Document


class CorpusBuilder:
    """Collects documents in load order; raises on the second use of an id."""

    def __init__(self, location: Path):
        self._location = location
        self._documents: list[Document] = []
        self._sources: dict[str, str] = {}
        self._skipped_empty: list[str] = []

    def add(self, document: Document, *, file: Path, line: int | None = None, empty: bool) -> None:
        """Add ``document``, whose ``source`` names where it was defined.

        Each format decides what ``empty`` means (a JSONL record with neither
        title nor text; a note whose body is blank), the builder only counts it.
        """
        first = self._sources.get(document.id)
        if first is not None:
            raise InputError(
                f"duplicate document id {document.id!r} (first defined at {first}); "
                "document ids must be unique",
                file=file,
                line=line,
            )
        self._sources[document.id] = document.source
        if empty:
            self._skipped_empty.append(document.id)
        else:
            self._documents.append(document)

    def build_file(self, path: Path, layout: str) -> Corpus:
        """The corpus of one file, which must define a document: an empty file is far
        likelier a wrong path or a failed export than a corpus with nothing in it."""
        if not self._sources:
            raise InputError(
                f"no documents in this file; a corpus file holds one {layout} object per line",
                file=path,
            )
        return self.build()

    def build(self) -> Corpus:
        return Corpus(
            documents=tuple(self._documents),
            location=str(self._location),
            skipped_empty=tuple(self._skipped_empty),
        )
