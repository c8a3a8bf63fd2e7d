"""`retrieval-eval review`: one synthetic fixture at a time, each decision saved at once.

The dataset file itself records progress: an accepted fixture becomes
``human-annotated`` and a rejected one is removed, so neither comes back. Skipped
ids are kept in a small state file in the cache folder. Every change rewrites the
dataset (or state) file atomically, so quitting at any moment loses nothing, and
the next run resumes at the first synthetic fixture not yet decided.
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.fixtures import Fixture
from retrieval_eval.retrieval.base import Hit, Retriever

SHOWN_HITS = 5
_PASSAGE_CHARS = 600
_SNIPPET_CHARS = 90
HELP = "[a]ccept  [e]dit expected ids  [q]uery edit  [r]eject  [s]kip  [x] quit"
CHOICES = ("a", "e", "q", "r", "s", "x")


class DatasetLines:
    """The dataset file as lines: only the line a decision touches is rewritten, and every
    other byte of the file (a byte-order mark, CRLF endings, the last newline) stays."""

    def __init__(self, path: Path):
        self.path = path
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read the dataset: {error}", file=path) from None
        self._bom = "\ufeff" if text.startswith("\ufeff") else ""
        # Split at "\n" only, as the validator reads lines: a "\r" before it stays part of
        # the line it ends, and U+2028 inside a JSON string is not a line break.
        self.lines = text[len(self._bom) :].split("\n")
        self.records: dict[str, int] = {}  # query_id -> index in lines
        for index, line in enumerate(self.lines):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                Fixture.model_validate(data)
            except (ValueError, ValidationError):
                raise InputError(
                    "not a valid fixture; run `retrieval-eval validate` on this file first",
                    file=path,
                    line=index + 1,
                ) from None
            self.records[data["query_id"]] = index

    def fixture(self, query_id: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.lines[self.records[query_id]])
        return data

    def line_number(self, query_id: str) -> int:
        return self.records[query_id] + 1

    def replace(self, query_id: str, data: dict[str, Any]) -> None:
        Fixture.model_validate(data)  # a decision never writes an invalid fixture
        index = self.records[query_id]
        ending = "\r" if self.lines[index].endswith("\r") else ""
        self.lines[index] = json.dumps(data, ensure_ascii=False) + ending
        self._save()

    def remove(self, query_id: str) -> None:
        index = self.records.pop(query_id)
        del self.lines[index]
        self.records = {q: i - (i > index) for q, i in self.records.items()}
        self._save()

    def _save(self) -> None:
        atomic_write_text(self.path, self._bom + "\n".join(self.lines))


class SkipState:
    """Ids the reviewer skipped, per dataset file, in the cache folder."""

    def __init__(self, cache_dir: Path, dataset: Path, *, kind: str = ""):
        digest = hashlib.sha256(str(dataset.resolve()).encode()).hexdigest()[:16]
        self.path = cache_dir / "review" / f"{digest}{kind}.json"
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
            self.skipped = {s for s in loaded.get("skipped", []) if isinstance(s, str)}
        except (OSError, ValueError, AttributeError):
            self.skipped = set()

    def skip(self, query_id: str) -> None:
        self.skipped.add(query_id)
        atomic_write_text(self.path, json.dumps({"skipped": sorted(self.skipped)}) + "\n")


def parse_hit_choice(text: str, available: int) -> list[int] | None:
    """``"1,3"`` or ``"1 3"`` → [0, 2]; None when it is not a list of distinct hit numbers."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    # ASCII only: str.isdigit() is also true of '¹' and '٣', which int() refuses or misreads.
    if not parts or not all(p.isascii() and p.isdigit() for p in parts):
        return None
    numbers = [int(p) for p in parts]
    if len(set(numbers)) != len(numbers) or not all(1 <= n <= available for n in numbers):
        return None
    return [n - 1 for n in numbers]


@dataclass
class Tally:
    accepted: int = 0
    rejected: int = 0
    skipped: int = 0
    edited: int = 0


@dataclass
class Console:
    echo: Callable[[str], None]
    ask: Callable[[str], str]  # raises EOFError when input ends


class Review:
    def __init__(
        self,
        dataset: DatasetLines,
        state: SkipState,
        corpus: Corpus,
        retriever: Retriever,
        console: Console,
    ):
        self.dataset = dataset
        self.state = state
        self.docs = {d.id: d for d in corpus.documents}
        self.retriever = retriever
        self.console = console
        self.tally = Tally()

    def pending(self) -> list[str]:
        return [
            q
            for q in self.dataset.records
            if self.dataset.fixture(q).get("ground_truth_source") == "synthetic"
            and q not in self.state.skipped
        ]

    def run(self) -> int:
        """Review until done or quit; returns how many are still to review."""
        queue = self.pending()
        for number, query_id in enumerate(queue, start=1):
            if not self._one(query_id, number, len(queue)):
                break
        return len(self.pending())

    def _one(self, query_id: str, number: int, total: int) -> bool:
        while True:
            data = self.dataset.fixture(query_id)
            hits = self._hits(data)
            self._show(data, hits, number, total)
            try:
                choice = self.console.ask(HELP).strip().lower()[:1]
            except EOFError:
                return False
            if choice == "a":
                data["ground_truth_source"] = "human-annotated"
                self.dataset.replace(query_id, data)
                self.tally.accepted += 1
                return True
            if choice == "r":
                self.dataset.remove(query_id)
                self.tally.rejected += 1
                return True
            if choice == "s":
                self.state.skip(query_id)
                self.tally.skipped += 1
                return True
            if choice == "x":
                return False
            if choice == "e" and not self._edit_ids(query_id, data, hits):
                return False
            if choice == "q" and not self._edit_query(query_id, data):
                return False
            if choice not in CHOICES:
                self.console.echo(f"unknown choice; {HELP}")

    def _edit_ids(self, query_id: str, data: dict[str, Any], hits: Sequence[Hit]) -> bool:
        if not hits:
            self.console.echo("no hits to choose from")
            return True
        while True:
            try:
                answer = self.console.ask(f"expected ids: hit numbers, best first (1-{len(hits)})")
            except EOFError:
                return False
            chosen = parse_hit_choice(answer, len(hits))
            if chosen is not None:
                break
            self.console.echo(f"give distinct numbers from 1 to {len(hits)}, e.g. 1,3")
        ids = [hits[i].doc_id for i in chosen]
        data["expected_top_k_ids"] = ids
        data.pop("expect_empty", None)
        relevance = {k: v for k, v in data.get("relevance", {}).items() if k in ids}
        if relevance:
            data["relevance"] = relevance
        else:
            data.pop("relevance", None)
        self.dataset.replace(query_id, data)
        self.tally.edited += 1
        return True

    def _edit_query(self, query_id: str, data: dict[str, Any]) -> bool:
        try:
            text = self.console.ask("new query").strip()
        except EOFError:
            return False
        if text:
            data["query"] = text
            self.dataset.replace(query_id, data)
            self.tally.edited += 1
        return True

    def _hits(self, data: dict[str, Any]) -> tuple[Hit, ...]:
        tags = (data.get("filters") or {}).get("tags", [])
        return self.retriever.search(data["query"], SHOWN_HITS, tags).hits

    def _show(self, data: dict[str, Any], hits: Sequence[Hit], number: int, total: int) -> None:
        expected = data["expected_top_k_ids"]
        say = self.console.echo
        say("")
        say(f"[{number}/{total}] {data['query_id']}  ({data.get('query_type') or 'query'})")
        say(f"Query:    {data['query']}")
        if data.get("filters"):
            say(f"Filter:   tags {', '.join(data['filters']['tags'])}")
        say(f"Expected: {', '.join(expected) if expected else '(no results)'}")
        for doc_id in expected[:2]:
            doc = self.docs.get(doc_id)
            if doc is not None:
                say(f"Source passage ({doc_id}):")
                passage = _clip(" ".join(doc.text.split()), _PASSAGE_CHARS)
                say(textwrap.fill(passage, width=96, initial_indent="  ", subsequent_indent="  "))
        say(f"Top {SHOWN_HITS} ({self.retriever.name}):")
        if not hits:
            say("  (no results)")
        for rank, hit in enumerate(hits, start=1):
            mark = "  <- expected" if hit.doc_id in expected else ""
            snippet = _clip(" ".join(hit.text.split()), _SNIPPET_CHARS)
            say(f"  {rank}. {hit.doc_id}{mark}\n     {snippet}")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
