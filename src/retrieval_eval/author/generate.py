"""`retrieval-eval generate`: synthetic golden fixtures from a corpus, checked before kept.

For each dataset file, documents are taken in a seeded order that cycles through
the corpus's folders and tags (so every part of the corpus is asked about), and the
model writes one query per document in the file's styles. Every query is then run
against the corpus with BM25 and dense retrieval before it is kept:

- a ``synonym``/``paraphrase`` query that BM25 answers at rank 1 by reusing a phrase
  of the passage tests nothing dense retrieval does, so it is asked for again;
- a query whose source document no retriever finds in the top 100 is flagged (written
  to the flagged file with the reason), never silently kept.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from retrieval_eval.author.prompts import (
    MEANING_STYLES,
    Answer,
    Passage,
    Style,
    build_prompt,
    parse_answer,
)
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.load.fixtures import Filters, Fixture, RetrievalType
from retrieval_eval.retrieval.base import Retriever
from retrieval_eval.retrieval.builtin.tokenizer import KeywordTokenizer
from retrieval_eval.score.cached_claude import CachedClaude, CostCapReached

# Styles per dataset file, used in turn.
STYLES: dict[RetrievalType, tuple[Style, ...]] = {
    "semantic": ("paraphrase", "synonym"),
    "keyword": ("exact_match", "keyword"),
    "hybrid": ("multi_concept", "paraphrase", "keyword"),
}
ID_PREFIX: dict[RetrievalType, str] = {
    "semantic": "gen-sem",
    "keyword": "gen-kw",
    "hybrid": "gen-hyb",
}
CHECK_DEPTH = 100
_RARE_TERMS = 8
_MIN_DOC_CHARS = 80
_PHRASE_WORDS = 3
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


@dataclass
class Flagged:
    fixture: Fixture
    reason: str


@dataclass
class FileResult:
    retrieval_type: RetrievalType
    kept: list[Fixture] = field(default_factory=list)
    flagged: list[Flagged] = field(default_factory=list)
    regenerated: int = 0


@dataclass
class GenerateResult:
    files: list[FileResult]
    stopped: str | None = None  # why generation stopped early (the cost cap)


@dataclass(frozen=True)
class GeneratePlan:
    types: tuple[RetrievalType, ...]
    per_file: int
    tags: bool
    seed: int
    attempts: int = 3


class Checker:
    """Runs a query on every checking retriever; tells where the source documents rank."""

    def __init__(self, retrievers: Sequence[Retriever]):
        self._retrievers = list(retrievers)

    def ranks(self, query: str, tags: Sequence[str] = ()) -> dict[str, list[str]]:
        return {
            r.name: [hit.doc_id for hit in r.search(query, CHECK_DEPTH, tags).hits]
            for r in self._retrievers
        }


def generate(
    corpus: Corpus,
    plan: GeneratePlan,
    claude: CachedClaude,
    checker: Checker,
    *,
    progress: Callable[[str], None] = lambda message: None,
    existing: Mapping[RetrievalType, Sequence[Fixture]] | None = None,
    on_kept: Callable[[int], None] = lambda count: None,
) -> GenerateResult:
    """``existing`` holds the fixtures already in each file (``--append``): their ids are
    not reused and their documents are asked about last. ``progress`` hears what each
    request asks about, ``on_kept`` how many fixtures it kept (for a progress bar whose
    total is ``per_file`` × types)."""
    docs = [d for d in corpus.documents if len(d.text.strip()) >= _MIN_DOC_CHARS]
    order = stratified_order(docs, seed=plan.seed)
    rare = RareTerms(corpus)
    result = GenerateResult(files=[])
    used = _used_documents(existing)
    try:
        for retrieval_type in plan.types:
            file_result = FileResult(retrieval_type)
            result.files.append(file_result)
            taken = {f.query_id for f in (existing or {}).get(retrieval_type, ())}
            requests = _requests(retrieval_type, plan, order, used, corpus, taken, rare)
            _fill_file(
                file_result, requests, plan, rare, claude, checker, corpus, progress, on_kept
            )
    except CostCapReached as error:
        result.stopped = error.message
    return result


def first_prompt(
    corpus: Corpus,
    plan: GeneratePlan,
    existing: Mapping[RetrievalType, Sequence[Fixture]] | None = None,
) -> str | None:
    """The first prompt `generate` will send, known before any retriever is indexed:
    when its answer is not cached, the run needs an API key. None when nothing is asked."""
    if not plan.types:
        return None
    docs = [d for d in corpus.documents if len(d.text.strip()) >= _MIN_DOC_CHARS]
    order = stratified_order(docs, seed=plan.seed)
    used = _used_documents(existing)
    rtype = plan.types[0]
    taken = {f.query_id for f in (existing or {}).get(rtype, ())}
    rare = RareTerms(corpus)
    request = next(_requests(rtype, plan, order, used, corpus, taken, rare), None)
    return _prompt(request, rare) if request is not None else None


def _used_documents(existing: Mapping[RetrievalType, Sequence[Fixture]] | None) -> set[str]:
    return {
        i for fixtures in (existing or {}).values() for f in fixtures for i in f.expected_top_k_ids
    }


@dataclass(frozen=True)
class _Request:
    query_id: str
    style: Style
    sources: tuple[Document, ...]
    tag: str | None
    empty: bool = False  # an `expect_empty` case, about sources[0] with a tag nothing has


def _requests(
    rtype: RetrievalType,
    plan: GeneratePlan,
    order: list[Document],
    used: set[str],
    corpus: Corpus,
    taken: set[str],
    rare: RareTerms,
) -> Iterator[_Request]:
    """The queries of one file, in order; the caller stops when it has kept enough."""
    styles = STYLES[rtype]
    # Documents not yet asked about come first, so each file covers different documents.
    queue = [d for d in order if d.id not in used] + [d for d in order if d.id in used]
    counter = 0
    tag_cases = _tag_cases(plan, corpus, queue) if plan.tags else []
    position = 0
    while tag_cases or position < len(queue):
        counter += 1
        query_id = f"{ID_PREFIX[rtype]}-{counter:03d}"
        if query_id in taken:
            continue
        if tag_cases:
            doc, tag = tag_cases.pop(0)
            if doc is None:
                yield _Request(query_id, "tag_filter", (queue[0],), tag, empty=True)
                continue
            style: Style = "tag_filter"
            sources: tuple[Document, ...] = (doc,)
        else:
            doc = queue[position]
            tag = None
            style = styles[position % len(styles)]
            position += 1
            sources = (doc,)
            if style == "multi_concept":
                partner = _partner(doc, order, rare)
                if partner is None:
                    style = styles[1 % len(styles)]
                else:
                    sources = (doc, partner)
        used.update(s.id for s in sources)
        yield _Request(query_id, style, sources, tag)


def _prompt(request: _Request, rare: RareTerms, feedback: str | None = None) -> str:
    if request.empty:
        doc = request.sources[0]
        alone = (Passage(doc.id, doc.title, doc.text),)
        return build_prompt("tag_filter", alone, rare_terms=rare.of(doc), tag=request.tag)
    terms = tuple(t for s in request.sources for t in rare.of(s))
    passages = tuple(Passage(s.id, s.title, s.text) for s in request.sources)
    return build_prompt(
        request.style, passages, rare_terms=terms, tag=request.tag, feedback=feedback
    )


def _fill_file(
    out: FileResult,
    requests: Iterator[_Request],
    plan: GeneratePlan,
    rare: RareTerms,
    claude: CachedClaude,
    checker: Checker,
    corpus: Corpus,
    progress: Callable[[str], None],
    on_kept: Callable[[int], None],
) -> None:
    while len(out.kept) < plan.per_file:
        request = next(requests, None)
        if request is None:
            return
        before = len(out.kept)
        if request.empty:
            _empty_case(out, request, claude, rare)
        else:
            ids = ", ".join(s.id for s in request.sources)
            progress(f"{request.query_id}: {request.style} about {ids}")
            _make_one(out, request, plan, claude, checker, rare)
        if len(out.kept) > before:
            on_kept(len(out.kept) - before)


def _make_one(
    out: FileResult,
    request: _Request,
    plan: GeneratePlan,
    claude: CachedClaude,
    checker: Checker,
    rare: RareTerms,
) -> None:
    query_id, style, sources, tag = request.query_id, request.style, request.sources, request.tag
    terms = tuple(t for s in sources for t in rare.of(s))
    feedback: str | None = None
    for attempt in range(plan.attempts):
        prompt = _prompt(request, rare, feedback)
        reply = claude.ask(prompt, about=f"{query_id} ({', '.join(s.id for s in sources)})")
        answer = parse_answer(reply.text, about=query_id)
        fixture = _fixture(out.retrieval_type, query_id, style, sources, tag, answer)
        ranks = checker.ranks(answer.query, (tag,) if tag else ())
        copied = _copied_phrase(answer.query, sources, terms) if style in MEANING_STYLES else None
        bm25_first = ranks.get("bm25", [None])[:1] == [sources[0].id]
        if copied is not None and bm25_first:
            if attempt + 1 < plan.attempts:
                out.regenerated += 1
                feedback = f"BM25 finds it at rank 1 because it reuses {copied!r} from the passage."
                continue
            out.flagged.append(
                Flagged(fixture, f"still reuses {copied!r} after {plan.attempts} attempts")
            )
            return
        missing = [s.id for s in sources if not any(s.id in found for found in ranks.values())]
        if missing:
            names = " or ".join(sorted(ranks))
            out.flagged.append(
                Flagged(fixture, f"{', '.join(missing)} not in the top {CHECK_DEPTH} of {names}")
            )
            return
        out.kept.append(fixture)
        return


def _fixture(
    rtype: RetrievalType,
    query_id: str,
    style: Style,
    sources: tuple[Document, ...],
    tag: str | None,
    answer: Answer,
) -> Fixture:
    text = "\n".join(s.text for s in sources)
    lowered = text.lower()
    keywords = [k for k in dict.fromkeys(answer.expected_keywords) if k.lower() in lowered]
    return Fixture(
        query_id=query_id,
        query=answer.query,
        retrieval_type=rtype,
        expected_top_k_ids=[s.id for s in sources],
        ground_truth_source="synthetic",
        query_type=style,
        tags=sorted({t for s in sources for t in s.tags}),
        filters=Filters(tags=[tag]) if tag else None,
        expected_keywords=keywords[:5],
        answer_context=_context_from(text, answer),
    )


def _context_from(text: str, answer: Answer) -> str:
    """The model's quoted sentence if it really is in the passage, else the passage's
    sentence sharing most words with the query: the context always comes from the source."""
    quoted = " ".join(answer.answer_context.split())
    flat = " ".join(text.split())
    if quoted and quoted in flat:
        return quoted
    words = set(re.findall(r"\w+", answer.query.lower()))
    sentences: list[str] = [s.strip() for s in _SENTENCE.findall(flat) if s.strip()]
    if not sentences:
        return flat[:300]
    best = max(sentences, key=lambda s: (len(words & set(re.findall(r"\w+", s.lower()))), -len(s)))
    return best[:500]


def _empty_case(out: FileResult, request: _Request, claude: CachedClaude, rare: RareTerms) -> None:
    """An `expect_empty` case: a real query filtered by a tag no document carries."""
    tag = request.tag
    assert tag is not None  # an empty case is always filtered by its absent tag
    prompt = _prompt(request, rare)
    reply = claude.ask(prompt, about=f"{request.query_id} (tag {tag})")
    answer = parse_answer(reply.text, about=request.query_id)
    out.kept.append(
        Fixture(
            query_id=request.query_id,
            query=answer.query,
            retrieval_type=out.retrieval_type,
            expected_top_k_ids=[],
            ground_truth_source="synthetic",
            query_type="tag_filter",
            tags=["tag-no-match"],
            filters=Filters(tags=[tag]),
            expect_empty=True,
            answer_context=f"No document carries the tag {tag!r}, so the correct result is empty.",
        )
    )


def _tag_cases(
    plan: GeneratePlan, corpus: Corpus, queue: Sequence[Document]
) -> list[tuple[Document | None, str]]:
    """One filtered query on a tagged document, and one on a tag no document carries."""
    cases: list[tuple[Document | None, str]] = []
    tagged = next((d for d in queue if d.tags), None)
    if tagged is not None:
        cases.append((tagged, sorted(tagged.tags)[0]))
    existing = corpus.tags()
    absent = next(f"no-such-tag-{n}" for n in range(1000) if f"no-such-tag-{n}" not in existing)
    cases.append((None, absent))
    return cases


def _partner(doc: Document, order: Sequence[Document], rare: RareTerms) -> Document | None:
    """The document sharing most rare terms with ``doc`` (same folder breaks ties): a
    pair one question can reasonably combine. None when no document shares any."""
    mine = set(rare.of(doc, count=30))

    def closeness(other: Document) -> tuple[int, bool, str]:
        shared = len(mine & set(rare.of(other, count=30)))
        return (shared, _folder(other) == _folder(doc), other.id)

    candidates = [o for o in order if o.id != doc.id]
    best = max(candidates, key=closeness, default=None)
    return best if best is not None and closeness(best)[0] > 0 else None


def stratified_order(docs: Sequence[Document], *, seed: int) -> list[Document]:
    """Seeded shuffle within each stratum (folder, else first tag), then round-robin over
    strata, so the first N documents spread over the whole corpus."""
    rng = random.Random(seed)
    strata: dict[str, list[Document]] = {}
    for doc in sorted(docs, key=lambda d: d.id):
        strata.setdefault(_stratum(doc), []).append(doc)
    groups = [strata[name] for name in sorted(strata)]
    for group in groups:
        rng.shuffle(group)
    rng.shuffle(groups)
    ordered: list[Document] = []
    for round_ in range(max((len(g) for g in groups), default=0)):
        ordered.extend(g[round_] for g in groups if round_ < len(g))
    return ordered


def _folder(doc: Document) -> str:
    return doc.id.rpartition("/")[0]


def _stratum(doc: Document) -> str:
    return _folder(doc) or (sorted(doc.tags)[0] if doc.tags else "")


class RareTerms:
    """A document's most distinctive words: high term frequency, low document frequency."""

    def __init__(self, corpus: Corpus):
        self._tokenizer = KeywordTokenizer(stopwords=True)
        self._df: Counter[str] = Counter()
        for doc in corpus.documents:
            self._df.update(set(self._tokens(doc)))
        self._n = max(len(corpus.documents), 1)
        self._ranked: dict[str, tuple[str, ...]] = {}

    def _tokens(self, doc: Document) -> list[str]:
        return [t for t in self._tokenizer.tokenize(f"{doc.title}\n{doc.text}") if not t.isdigit()]

    def of(self, doc: Document, *, count: int = _RARE_TERMS) -> tuple[str, ...]:
        ranked = self._ranked.get(doc.id)
        if ranked is None:
            tf = Counter(t for t in self._tokens(doc) if len(t) > 2)
            ranked = tuple(
                sorted(tf, key=lambda t: (-tf[t] * math.log(self._n / self._df.get(t, 1) + 1), t))
            )
            self._ranked[doc.id] = ranked
        return ranked[:count]


def reused_phrase(query: str, sources: Sequence[Document], rare: RareTerms) -> str | None:
    """What a synonym or paraphrase query takes verbatim from its sources (a rare term, or
    three words in a row), the check ``generate`` makes before keeping one; None: nothing."""
    terms = tuple(t for s in sources for t in rare.of(s))
    return _copied_phrase(query, sources, terms)


def _copied_phrase(query: str, sources: Sequence[Document], terms: Sequence[str]) -> str | None:
    """A rare term, or a run of three words, that the query takes verbatim from a passage."""
    words = re.findall(r"\w+", query.lower())
    text = " ".join(re.findall(r"\w+", " ".join(f"{s.title} {s.text}" for s in sources).lower()))
    for term in terms:
        if term in words:
            return term
    for start in range(len(words) - _PHRASE_WORDS + 1):
        phrase = " ".join(words[start : start + _PHRASE_WORDS])
        if f" {phrase} " in f" {text} ":
            return phrase
    return None


def fixture_line(fixture: Fixture) -> str:
    data = fixture.model_dump(mode="json", exclude_defaults=True)
    # Required fields stay even at their default value, and in the documented order.
    for required in ("query_id", "query", "retrieval_type", "expected_top_k_ids"):
        data.setdefault(required, getattr(fixture, required))
    ordered = {k: data[k] for k in Fixture.model_fields if k in data}
    return json.dumps(ordered, ensure_ascii=False)


def flagged_line(flagged: Flagged) -> str:
    fixture = json.loads(fixture_line(flagged.fixture))
    return json.dumps({"reason": flagged.reason, "fixture": fixture}, ensure_ascii=False)
