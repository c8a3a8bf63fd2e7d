"""Rules that need more than one line: counts per file, ids across files, ids against the corpus."""

from __future__ import annotations

import difflib
from pathlib import Path

from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.fixtures import RETRIEVAL_TYPES, LocatedFixture
from retrieval_eval.load.markdown_notes import NOTE_SUFFIXES
from retrieval_eval.validate.problems import Problem

# Above this many documents a "did you mean" search over every id costs more than it helps.
_SUGGEST_MAX_IDS = 20_000


def file_retrieval_type(path: Path) -> str | None:
    """``semantic.jsonl`` holds semantic fixtures; a file with another name may mix types."""
    return path.stem if path.suffix == ".jsonl" and path.stem in RETRIEVAL_TYPES else None


def check_type_matches_file(located: LocatedFixture) -> Problem | None:
    expected = file_retrieval_type(located.file)
    actual = located.fixture.retrieval_type
    if expected is None or actual == expected:
        return None
    return Problem(
        located.file,
        located.line,
        f"retrieval_type is {actual!r} but {located.file.name} holds {expected!r} fixtures; "
        f"move the fixture to {actual}.jsonl or fix retrieval_type",
    )


def check_counts(
    path: Path, *, fixtures: int, human: int, min_fixtures: int, min_human: int
) -> list[Problem]:
    problems = []
    if fixtures < min_fixtures:
        problems.append(
            Problem(path, 1, f"{fixtures} valid fixtures; at least {min_fixtures} are required")
        )
    if human < min_human:
        problems.append(
            Problem(
                path,
                1,
                f"{human} human-annotated fixtures; at least {min_human} are required",
            )
        )
    return problems


# How a Markdown corpus names its notes (load/markdown_notes.py), said when an id was
# written as a file path.
_ID_RULE = "(a note's id is its path in the corpus folder, without .md, with / separators)"


class CorpusRules:
    """Checks a fixture's ids and filter tags against the documents that really exist."""

    def __init__(self, corpus: Corpus):
        # Empty documents exist (they were skipped, not invented), so naming one is not a typo.
        self._ids = corpus.ids() | frozenset(corpus.skipped_empty)
        self._tags_by_id = {doc.id: frozenset(doc.tags) for doc in corpus.documents}
        self._all_tags = corpus.tags()
        self._location = corpus.location
        self._sorted_ids: list[str] | None = None

    def check(self, located: LocatedFixture) -> list[Problem]:
        fixture = located.fixture
        problems = []
        for doc_id in fixture.expected_top_k_ids:
            if doc_id not in self._ids:
                problems.append(
                    Problem(located.file, located.line, self._missing_id_message(doc_id))
                )
        filter_tags = fixture.filter_tags()
        if not fixture.expect_empty:
            for tag in filter_tags:
                if tag not in self._all_tags:
                    problems.append(
                        Problem(
                            located.file,
                            located.line,
                            f"filter tag {tag!r} is on no document in the corpus; "
                            "set expect_empty: true if no results is the correct answer",
                        )
                    )
        if filter_tags:
            wanted = frozenset(filter_tags)
            for doc_id in fixture.expected_top_k_ids:
                tags = self._tags_by_id.get(doc_id)
                if tags is not None and not tags & wanted:
                    problems.append(
                        Problem(
                            located.file,
                            located.line,
                            f"expected id {doc_id!r} carries none of the filter tags "
                            f"{', '.join(map(repr, filter_tags))}, so a filtered search "
                            "can never return it",
                        )
                    )
        return problems

    def _missing_id_message(self, doc_id: str) -> str:
        message = f"expected id {doc_id!r} is not in the corpus ({self._location})"
        written = self._as_written(doc_id)
        if written is not None:
            return message + f"; did you mean {written!r}? {_ID_RULE}"
        if len(self._ids) <= _SUGGEST_MAX_IDS:
            if self._sorted_ids is None:
                self._sorted_ids = sorted(self._ids)
            close = difflib.get_close_matches(doc_id, self._sorted_ids, n=1, cutoff=0.75)
            if close:
                message += f"; did you mean {close[0]!r}?"
        return message

    def _as_written(self, doc_id: str) -> str | None:
        """The corpus id ``doc_id`` names when written as a file path: with its note
        suffix, the corpus folder in front, a leading ``./`` or ``\\`` separators (a few
        lookups, whatever the corpus's size)."""
        path = doc_id.replace("\\", "/").removeprefix("./")
        folder = Path(self._location).name + "/"
        bases = [path, path.removeprefix(folder)] if path.startswith(folder) else [path]
        candidates = list(bases)
        for base in bases:
            for suffix in NOTE_SUFFIXES:
                if base.lower().endswith(suffix):
                    candidates.append(base[: -len(suffix)])
        for candidate in candidates:
            if candidate != doc_id and candidate in self._ids:
                return candidate
        return None
