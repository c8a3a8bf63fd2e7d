"""The golden-dataset fixture: one JSON object per line of semantic/keyword/hybrid.jsonl.

The model is strict (no type coercion, unknown fields rejected) because these
files are written by hand: ``"minimum_mrr": "0.7"`` or a misspelt
``"expected_top_k_id"`` must be reported, not quietly accepted or ignored.
``schema/fixture.schema.json`` is generated from this model
(``retrieval-eval schema``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from retrieval_eval.load.invisible import (
    code_point_name,
    invisible_chars,
    same_id,
    shown_code_point,
)

RetrievalType = Literal["semantic", "keyword", "hybrid"]
RETRIEVAL_TYPES: tuple[RetrievalType, ...] = ("semantic", "keyword", "hybrid")
GroundTruthSource = Literal["human-annotated", "synthetic"]
NonEmptyText = Annotated[str, Field(min_length=1)]


class Filters(BaseModel):
    """Restrict retrieval to documents carrying ANY of ``tags`` (OR semantics)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    tags: list[NonEmptyText] = Field(
        min_length=1, description="Tags; a document matches if it has any."
    )


class Fixture(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        title="Golden-dataset fixture",
        json_schema_extra={"description": "One line of a retrieval-eval golden dataset (JSONL)."},
    )

    query_id: NonEmptyText = Field(description="Unique across all dataset files.")
    query: str = Field(
        description="The query text; must not be blank.", json_schema_extra={"pattern": r"\S"}
    )
    retrieval_type: RetrievalType = Field(
        description="Must match the file: semantic, keyword or hybrid."
    )
    expected_top_k_ids: list[NonEmptyText] = Field(
        description="Relevant document ids, best first; empty only when expect_empty is true."
    )
    ground_truth_source: GroundTruthSource
    minimum_mrr: float | None = Field(default=None, ge=0.0, le=1.0)
    tags: list[NonEmptyText] = Field(default_factory=list, description="Labels for breakdowns.")
    query_type: NonEmptyText | None = Field(
        default=None,
        description="e.g. exact_match, synonym, paraphrase, multi_concept, tag_filter.",
    )
    # At most the largest 64-bit integer: grades become int64 arrays when scored.
    relevance: dict[str, Annotated[int, Field(ge=1, le=2**63 - 1)]] = Field(
        default_factory=dict,
        description="Graded relevance (id -> grade >= 1); ids must be in expected_top_k_ids.",
    )
    filters: Filters | None = None
    expect_empty: bool = Field(
        default=False, description="The correct answer is no results at all."
    )
    expected_keywords: list[NonEmptyText] = Field(default_factory=list)
    answer_context: str | None = None

    @field_validator("query_id")
    @classmethod
    def _query_id_visible(cls, value: str) -> str:
        return visible_id(value)

    @field_validator("expected_top_k_ids")
    @classmethod
    def _doc_ids_visible(cls, value: list[str]) -> list[str]:
        return [visible_id(doc_id) for doc_id in value]

    @field_validator("relevance")
    @classmethod
    def _graded_ids_visible(cls, value: dict[str, int]) -> dict[str, int]:
        return {visible_id(doc_id): grade for doc_id, grade in value.items()}

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty or blank")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Fixture:
        if self.expect_empty and self.expected_top_k_ids:
            raise ValueError(
                "expect_empty is true but expected_top_k_ids is not empty; "
                "an expected-empty query has no expected ids"
            )
        if not self.expect_empty and not self.expected_top_k_ids:
            raise ValueError(
                "expected_top_k_ids is empty; list at least one id, "
                "or set expect_empty: true if no results is the correct answer"
            )
        seen: set[str] = set()
        for doc_id in self.expected_top_k_ids:
            if doc_id in seen:
                raise ValueError(f"expected_top_k_ids lists {doc_id!r} more than once")
            seen.add(doc_id)
        stray = [doc_id for doc_id in self.relevance if doc_id not in seen]
        if stray:
            raise ValueError(
                f"relevance grades {', '.join(map(repr, stray))} not listed in "
                "expected_top_k_ids; grade only expected ids"
            )
        return self

    def grades(self) -> dict[str, int]:
        """Grade of every expected id; an id without a ``relevance`` entry has grade 1."""
        return {doc_id: self.relevance.get(doc_id, 1) for doc_id in self.expected_top_k_ids}

    def filter_tags(self) -> tuple[str, ...]:
        return tuple(self.filters.tags) if self.filters is not None else ()


def visible_id(value: str) -> str:
    """``value`` in NFC, the form ids are compared in; ``ValueError`` naming each code
    point that cannot be seen (an id differing from another only by those reads the same)."""
    hidden = invisible_chars(value)
    if hidden:
        names = ", ".join(code_point_name(char) for char in hidden)
        shown = "".join(shown_code_point(char) if char in hidden else char for char in value)
        raise ValueError(
            f"'{shown}' contains {names}, which cannot be seen: an id with it reads "
            "exactly like one without; remove it"
        )
    return same_id(value)


@dataclass(frozen=True)
class LocatedFixture:
    """A fixture and where it was written, so every later report can point at the line."""

    fixture: Fixture
    file: Path
    line: int
