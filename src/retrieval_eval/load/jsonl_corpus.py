"""Read our own JSONL corpus format: one ``{"id", "title", "text", "tags"?, "metadata"?}`` per line.

Unlike BEIR (someone else's format), this one is ours, so it is strict: an
unknown field is an error, because a misspelt ``"tagz"`` would otherwise
silently drop every tag filter on that document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus_builder import CorpusBuilder
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.load.jsonl_lines import iter_objects_or_raise
from retrieval_eval.load.pydantic_messages import describe_validation_error


class DocumentRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1)
    title: str
    text: str
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


def load_jsonl_corpus(path: Path) -> Corpus:
    builder = CorpusBuilder(path)
    for number, raw in iter_objects_or_raise(path):
        try:
            record = DocumentRecord.model_validate(raw)
        except ValidationError as error:
            raise InputError(
                describe_validation_error(error, DocumentRecord), file=path, line=number
            ) from None
        document = Document(
            id=record.id,
            title=record.title,
            text=record.text,
            tags=tuple(
                dict.fromkeys(tag.strip().lstrip("#") for tag in record.tags if tag.strip())
            ),
            metadata=record.metadata,
            source=f"{path}:{number}",
        )
        empty = not (record.title.strip() or record.text.strip())
        builder.add(document, file=path, line=number, empty=empty)
    return builder.build_file(path, '{"id", "title", "text"}')
