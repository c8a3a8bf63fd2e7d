"""`retrieval-eval review --holes report.json`: the unlabelled documents that newly
entered a regressed query's top k, one at a time, each with its passage.

Accepting one adds its id to the fixture's ``expected_top_k_ids``: a label a person
reviewed, the only way a document joins a golden set (the judge's view is shown,
never applied). Only that fixture's line is rewritten, atomically; every other byte
of the file stays. A rejected or skipped document is remembered in the cache folder
and not shown again; one already expected (accepted earlier, or by hand) is passed over.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from retrieval_eval.author.review import Console, DatasetLines, SkipState
from retrieval_eval.errors import InputError
from retrieval_eval.load.documents import Document
from retrieval_eval.results import Hole, QueryMove, RunReport

HOLE_HELP = "[a]ccept as relevant  [r]eject  [s]kip  [x] quit"
_PASSAGE_CHARS = 900


def read_report(path: Path) -> RunReport:
    """report.json as this version writes it; anything else is an error naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the report: {error}", file=path) from None
    try:
        return RunReport.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise InputError(
            f"not a report.json this version of retrieval-eval reads (at {key!r}: "
            f"{first['msg']}); run `retrieval-eval run` again to write one",
            file=path,
        ) from None


@dataclass(frozen=True)
class Candidate:
    dataset: str  # the dataset file's name
    move: QueryMove
    hole: Hole

    @property
    def key(self) -> str:
        return f"{self.move.query_id}\t{self.hole.doc_id}"


def candidates(report: RunReport) -> list[Candidate]:
    return [
        Candidate(dataset.name, move, hole)
        for dataset in report.datasets
        if dataset.comparison is not None
        for move in dataset.comparison.regressed_most
        for hole in move.holes
    ]


@dataclass
class HoleTally:
    accepted: int = 0
    rejected: int = 0
    skipped: int = 0
    left: int = 0
    gone: list[str] = field(default_factory=list)  # queries no longer in their file


class HoleReview:
    def __init__(
        self,
        report: RunReport,
        datasets_dir: Path,
        cache_dir: Path,
        documents: Mapping[str, Document],
        console: Console,
        *,
        include_skipped: bool = False,
    ) -> None:
        self.datasets_dir = datasets_dir
        self.documents = documents
        self.console = console
        self.tally = HoleTally()
        self._files: dict[str, tuple[DatasetLines, SkipState]] = {}
        self._include_skipped = include_skipped
        self._cache_dir = cache_dir
        self.queue = [c for c in candidates(report) if self._open(c)]

    def _file(self, name: str) -> tuple[DatasetLines, SkipState]:
        if name not in self._files:
            path = self.datasets_dir / name
            if not path.is_file():
                raise InputError(
                    "the report names this dataset file, but it is not there; run "
                    "review --holes where the report was made (or pass --datasets)",
                    file=path,
                )
            state = SkipState(self._cache_dir, path, kind="-holes")
            if self._include_skipped:
                state.skipped.clear()
            self._files[name] = (DatasetLines(path), state)
        return self._files[name]

    def _open(self, candidate: Candidate) -> bool:
        """Still to decide: its query is in the file, the document is not yet expected,
        and it was neither rejected nor skipped before."""
        lines, state = self._file(candidate.dataset)
        query_id = candidate.move.query_id
        if query_id not in lines.records:
            self.tally.gone.append(query_id)
            return False
        expected = lines.fixture(query_id)["expected_top_k_ids"]
        return candidate.hole.doc_id not in expected and candidate.key not in state.skipped

    def run(self) -> int:
        """Review until done or quit; returns how many are left."""
        for number, candidate in enumerate(self.queue, start=1):
            if not self._one(candidate, number):
                self.tally.left = len(self.queue) - number + 1
                return self.tally.left
        return 0

    def _one(self, candidate: Candidate, number: int) -> bool:
        lines, state = self._file(candidate.dataset)
        while True:
            self._show(candidate, lines, number)
            try:
                choice = self.console.ask(HOLE_HELP).strip().lower()[:1]
            except EOFError:
                return False
            if choice == "a":
                self._accept(candidate, lines)
                return True
            if choice in ("r", "s"):
                state.skip(candidate.key)
                if choice == "r":
                    self.tally.rejected += 1
                else:
                    self.tally.skipped += 1
                return True
            if choice == "x":
                return False
            self.console.echo(f"unknown choice; {HOLE_HELP}")

    def _accept(self, candidate: Candidate, lines: DatasetLines) -> None:
        query_id = candidate.move.query_id
        data = lines.fixture(query_id)
        data["expected_top_k_ids"] = [*data["expected_top_k_ids"], candidate.hole.doc_id]
        lines.replace(query_id, data)
        self.tally.accepted += 1
        self.console.echo(
            f"added {candidate.hole.doc_id} to {query_id}'s expected ids "
            f"({candidate.dataset}:{lines.line_number(query_id)})"
        )

    def _show(self, candidate: Candidate, lines: DatasetLines, number: int) -> None:
        say = self.console.echo
        move, hole = candidate.move, candidate.hole
        data = lines.fixture(move.query_id)
        say("")
        say(f"[{number}/{len(self.queue)}] {candidate.dataset} · {move.query_id}")
        say(f"Query:     {data['query']}")
        say(f"Expected:  {', '.join(data['expected_top_k_ids'])}")
        say(
            f"Regressed: {move.metric} {move.baseline:.3f} → {move.current:.3f}; "
            f"first relevant rank {_rank(move.rank_before)} → {_rank(move.rank_after)}"
        )
        judged = ""
        if hole.judge is not None:
            verdict = "relevant" if hole.judge.relevant else "not relevant"
            judged = f"  (judge: {verdict}, {hole.judge.score:.2f})"
        say(f"Unlabelled at rank {hole.rank}: {hole.doc_id}{judged}")
        doc = self.documents.get(hole.doc_id)
        if doc is None:
            say("  (this document is not in the corpus any more)")
            return
        passage = " ".join(doc.text.split())
        if len(passage) > _PASSAGE_CHARS:
            passage = passage[: _PASSAGE_CHARS - 1] + "…"
        say(textwrap.fill(passage, width=96, initial_indent="  ", subsequent_indent="  "))


def _rank(rank: int | None) -> str:
    return "—" if rank is None else str(rank)
