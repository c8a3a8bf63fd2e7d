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
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from retrieval_eval.author.generate import RareTerms, reused_phrase
from retrieval_eval.author.plain_text import plain_text
from retrieval_eval.author.prompts import MEANING_STYLES
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.fixtures import Fixture
from retrieval_eval.retrieval.base import Hit, Retriever
from retrieval_eval.trust.log_escape import terminal_text
from retrieval_eval.trust.redaction import clean

SHOWN_HITS = 5
_PASSAGE_CHARS = 600
_SNIPPET_CHARS = 90
HELP = "[a]ccept  [e]dit expected ids  [q]uery edit  [r]eject  [s]kip  [x] quit"
UNDO = "  [u]ndo the reject"
ENTER = " (a letter, then Enter)"
CHOICES = ("a", "e", "q", "r", "s", "u", "x")


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

    def remove(self, query_id: str) -> tuple[int, str]:
        """Take the fixture's line out; returns where it was and what it said (for undo)."""
        index = self.records.pop(query_id)
        line = self.lines.pop(index)
        self.records = {q: i - (i > index) for q, i in self.records.items()}
        self._save()
        return index, line

    def restore(self, query_id: str, index: int, line: str) -> None:
        """Put a removed line back where it was."""
        self.records = {q: i + (i >= index) for q, i in self.records.items()}
        self.lines.insert(index, line)
        self.records[query_id] = index
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


def parse_expected(text: str, hits: Sequence[str], known: Set[str]) -> list[str] | str:
    """Hit numbers (``1`` is the first hit shown) or document ids, best first, separated by
    commas or spaces: the ids they name, or what is wrong with them. The right document is
    often not in a weak retriever's top 5, so an id from the corpus is accepted too."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    ids: list[str] = []
    for part in parts:
        if part.isascii() and part.isdigit():
            number = int(part)
            if not 1 <= number <= len(hits):
                where = f"1 to {len(hits)}" if hits else "none: no hits are shown"
                return f"{part} is not a hit number ({where})"
            doc_id = hits[number - 1]
        elif part in known:
            doc_id = part
        else:
            return f"{part!r} is neither a hit number nor a document id in the corpus"
        if doc_id in ids:
            return f"{doc_id} is named twice"
        ids.append(doc_id)
    return ids


@dataclass
class Tally:
    """Each fixture's decision, counted once: the last one made (an undone reject is
    none), and which fixtures were edited on the way."""

    decisions: dict[str, str] = field(default_factory=dict)
    edits: set[str] = field(default_factory=set)

    def count(self, decision: str) -> int:
        return sum(1 for d in self.decisions.values() if d == decision)

    @property
    def accepted(self) -> int:
        return self.count("accepted")

    @property
    def rejected(self) -> int:
        return self.count("rejected")

    @property
    def skipped(self) -> int:
        return self.count("skipped")

    @property
    def edited(self) -> int:
        return len(self.edits)


@dataclass
class Console:
    """Where a review talks to the reviewer. Everything it shows passes through
    ``terminal_text``: a query or a passage is text from a dataset or a corpus, and an
    escape sequence in it (a clipboard write, a hidden link, a window title) must reach
    the terminal as nothing."""

    echo: Callable[[str], None]
    ask: Callable[[str], str]  # raises EOFError when input ends

    def __post_init__(self) -> None:
        echo, ask = self.echo, self.ask
        self.echo = lambda text: echo(terminal_text(clean(text)))
        self.ask = lambda prompt: ask(terminal_text(clean(prompt)))


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
        self.rare = RareTerms(corpus)
        self._rejected: tuple[str, int, str] | None = None  # the last reject, for undo

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
        position = 0
        while position < len(queue):
            outcome = self._one(queue[position], position + 1, len(queue))
            if outcome == "quit":
                break
            if outcome == "undo":
                position -= 1  # back to the fixture whose reject was undone
                continue
            position += 1
        return len(self.pending())

    def _one(self, query_id: str, number: int, total: int) -> str:
        """``next``, ``undo`` (the previous reject is undone: show that fixture again) or
        ``quit``."""
        while True:
            data = self.dataset.fixture(query_id)
            hits = self._hits(data)
            self._show(data, hits, number, total)
            prompt = HELP + (UNDO if self._rejected is not None else "") + ENTER
            try:
                choice = self.console.ask(prompt).strip().lower()[:1]
            except EOFError:
                return "quit"
            if choice == "u" and self._rejected is not None:
                rejected_id, index, line = self._rejected
                self.dataset.restore(rejected_id, index, line)
                self.tally.decisions.pop(rejected_id, None)
                self._rejected = None
                self.console.echo(f"{rejected_id}: reject undone")
                return "undo"
            if choice in ("a", "r", "s"):
                self._rejected = None
            if choice == "a":
                data["ground_truth_source"] = "human-annotated"
                self.dataset.replace(query_id, data)
                self.tally.decisions[query_id] = "accepted"
                return "next"
            if choice == "r":
                index, line = self.dataset.remove(query_id)
                self._rejected = (query_id, index, line)
                self.tally.decisions[query_id] = "rejected"
                return "next"
            if choice == "s":
                self.state.skip(query_id)
                self.tally.decisions[query_id] = "skipped"
                return "next"
            if choice == "x":
                return "quit"
            if choice == "e" and not self._edit_ids(query_id, data, hits):
                return "quit"
            if choice == "q" and not self._edit_query(query_id, data):
                return "quit"
            if choice not in CHOICES or (choice == "u" and self._rejected is None):
                self.console.echo(f"unknown choice; {prompt}")

    def _edit_ids(self, query_id: str, data: dict[str, Any], hits: Sequence[Hit]) -> bool:
        shown = [hit.doc_id for hit in hits]
        numbers = f"hit numbers (1-{len(hits)}) or " if hits else ""
        while True:
            try:
                answer = self.console.ask(
                    f"expected ids: {numbers}document ids, best first; an empty line cancels"
                )
            except EOFError:
                return False
            if not answer.strip():
                self.console.echo("edit cancelled: the expected ids are unchanged")
                return True
            chosen = parse_expected(answer, shown, self.docs.keys())
            if isinstance(chosen, list):
                break
            self.console.echo(f"{chosen}; e.g. 1,3 or {next(iter(self.docs), 'notes/a')}")
        data["expected_top_k_ids"] = chosen
        data.pop("expect_empty", None)
        relevance = {k: v for k, v in data.get("relevance", {}).items() if k in chosen}
        if relevance:
            data["relevance"] = relevance
        else:
            data.pop("relevance", None)
        self.dataset.replace(query_id, data)
        self.tally.edits.add(query_id)
        return True

    def _edit_query(self, query_id: str, data: dict[str, Any]) -> bool:
        try:
            text = self.console.ask("new query; an empty line cancels").strip()
        except EOFError:
            return False
        if not text:
            self.console.echo("edit cancelled: the query is unchanged")
            return True
        data["query"] = text
        self.dataset.replace(query_id, data)
        self.tally.edits.add(query_id)
        self._recheck_type(data)
        return True

    def _recheck_type(self, data: dict[str, Any]) -> None:
        """The check `generate` makes before keeping a synonym or paraphrase query: one
        that reuses a passage's rare term (or three of its words in a row) is found by
        BM25 through that word, so it no longer tests meaning."""
        style = data.get("query_type")
        if style not in MEANING_STYLES:
            return
        sources = [self.docs[i] for i in data["expected_top_k_ids"] if i in self.docs]
        copied = reused_phrase(data["query"], sources, self.rare)
        if copied is not None:
            self.console.echo(
                f"warning: a {style} query should not reuse the passage's words, and this one "
                f"reuses {copied!r}: BM25 finds it by that word; rephrase it (q), or it tests "
                "keywords rather than meaning"
            )

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
                passage = _clip(plain_text(doc.text), _PASSAGE_CHARS)
                for paragraph in passage.splitlines():
                    say(
                        textwrap.fill(
                            paragraph, width=96, initial_indent="  ", subsequent_indent="  "
                        )
                    )
        say(f"Top {SHOWN_HITS} ({self.retriever.name}):")
        if not hits:
            say("  (no results)")
        for rank, hit in enumerate(hits, start=1):
            mark = "  <- expected" if hit.doc_id in expected else ""
            snippet = _clip(" ".join(plain_text(hit.text).split()), _SNIPPET_CHARS)
            say(f"  {rank}. {hit.doc_id}{mark}\n     {snippet}")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
