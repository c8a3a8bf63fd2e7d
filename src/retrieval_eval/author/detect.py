"""What `retrieval-eval init` finds in a repository: the corpus and the retrieval code.

Detection is a guess the user confirms: `init` prints what it chose and why, and
`--corpus` overrides it. Nothing here reads file contents beyond a small prefix.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.load.markdown_notes import is_note_name

# Folders never searched: version control, virtual environments, dependencies, caches.
_SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        "site-packages",
        "dist",
        "build",
        ".retrieval-eval-cache",
        "retrieval-eval-report",
    }
)
# Markdown that documents the repository rather than being retrievable content.
_REPO_DOCS = frozenset(
    {"readme.md", "changelog.md", "contributing.md", "license.md", "code_of_conduct.md"}
)
_SQLITE_MAGIC = b"SQLite format 3\x00"
# The names the corpus loader reads as a Bear database (load/corpus.py); only these are opened.
_BEAR_SUFFIXES = (".sqlite", ".sqlite3", ".db", ".bearnote")
_CODE_SUFFIXES = frozenset({".py", ".ts", ".js", ".mjs", ".go", ".rs", ".java", ".kt", ".rb"})
# Imports and calls that mark a file as retrieval code (search engines, vector stores, RAG).
_RETRIEVAL_MARKERS = re.compile(
    r"\b(chromadb|pgvector|psycopg|faiss|bm25|rank_bm25|elasticsearch|opensearch|qdrant|"
    r"weaviate|pinecone|lancedb|milvus|langchain|llama_index|llamaindex|sentence_transformers|"
    r"embedding|retriev\w*|vector_store|vectorstore|tsvector)\b",
    re.IGNORECASE,
)
# Definitions that mark a file as the user's own retriever, whatever it imports: a TF-IDF
# module of the standard library alone still has `class DocsSearch` or `def search(`.
_RETRIEVER_DEFINITIONS = re.compile(
    r"^\s*(?:class\s+\w*(?:Search|Retriev)\w*\b"
    r"|(?:async\s+)?def\s+(?:search|retrieve)\w*\s*\("
    r"|(?:export\s+)?(?:async\s+)?function\s+(?:search|retrieve)\w*\s*\(|func\s+\w*Search)",
    re.MULTILINE,
)
# File and folder names that mark retrieval code: `search/`, `retriever.py`, `rag/`, ...
RETRIEVAL_NAMES = ("search", "retriever", "retrieval", "rag", "index", "ranking")
_NAME_WORDS = re.compile(r"[a-z0-9]+")
# Tests of the retriever do not change its numbers; their folders stay out of `paths`.
_TEST_DIRS = frozenset({"test", "tests", "spec", "specs", "__tests__"})
_PREFIX_BYTES = 64 * 1024
_MAX_FILES = 20_000


@dataclass(frozen=True)
class CorpusGuess:
    path: str  # relative to the repository, with / separators
    kind: str  # "markdown", "jsonl", "beir" or "bear"
    documents: int  # notes, lines or 0 when not counted
    reason: str


@dataclass(frozen=True)
class Detected:
    corpus: CorpusGuess | None
    code_dirs: tuple[str, ...]  # folders holding retrieval code, relative, / separators
    # Markdown in a documentation folder (`docs/`), not chosen while anything else was found.
    skipped_docs: CorpusGuess | None = None


def detect(root: Path) -> Detected:
    markdown: dict[str, int] = {}
    candidates: list[CorpusGuess] = []
    code_dirs: set[str] = set()
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        here = Path(folder)
        rel = _rel(here, root)
        if rel.startswith(".github"):
            continue
        for name in sorted(files):
            seen += 1
            if seen > _MAX_FILES:
                break
            path = here / name
            lower = name.lower()
            if is_note_name(name) and lower not in _REPO_DOCS:
                markdown[rel] = markdown.get(rel, 0) + 1
            elif lower in ("corpus.jsonl", "corpus.jsonl.gz"):  # BEIR ships both
                candidates.append(CorpusGuess(rel or ".", "beir", 0, "a BEIR folder"))
            elif lower.endswith(".jsonl") and _looks_like_documents(path):
                lines = _count_lines(path)
                candidates.append(
                    CorpusGuess(_rel(path, root), "jsonl", lines, f"{lines} JSONL documents")
                )
            elif lower.endswith(_BEAR_SUFFIXES) and _is_bear(path):
                candidates.append(CorpusGuess(_rel(path, root), "bear", 0, "a Bear database"))
            elif path.suffix in _CODE_SUFFIXES and _is_retrieval_code(path, rel):
                code_dirs.add(rel or ".")
    roots = _markdown_roots(markdown)
    docs = [r for r in roots if _in_docs(r.path)]
    candidates.extend(r for r in roots if not _in_docs(r.path))
    corpus = max(candidates, key=_rank, default=None)
    in_docs = max(docs, key=_rank, default=None)
    if corpus is None and in_docs is not None:
        # Nothing else to choose: a documentation folder is the corpus (docs/notes/ often is).
        reason = f"{in_docs.documents} Markdown notes in a documentation folder"
        return Detected(
            corpus=CorpusGuess(in_docs.path, "markdown", in_docs.documents, reason),
            code_dirs=_outermost(code_dirs),
        )
    return Detected(corpus=corpus, code_dirs=_outermost(code_dirs), skipped_docs=in_docs)


def _in_docs(rel: str) -> bool:
    return rel.split("/")[0] in {"docs", "doc"}


def _markdown_roots(counts: dict[str, int]) -> list[CorpusGuess]:
    """Folders of notes: the outermost folder whose subtree holds at least 3 notes,
    `docs/`-style documentation folders included (the caller ranks them last)."""
    totals: dict[str, int] = {}
    for rel, count in counts.items():
        parts = rel.split("/") if rel else []
        for depth in range(len(parts) + 1):
            key = "/".join(parts[:depth])
            totals[key] = totals.get(key, 0) + count
    roots = []
    for rel, total in totals.items():
        if not rel or total < 3:
            continue
        parent = rel.rpartition("/")[0]
        if parent and totals.get(parent, 0) == total:
            continue  # the parent holds exactly these notes: prefer the outermost
        roots.append(CorpusGuess(rel, "markdown", total, f"{total} Markdown notes"))
    return roots


def _rank(guess: CorpusGuess) -> tuple[int, int, str]:
    preferred = {"beir": 3, "bear": 2, "jsonl": 1, "markdown": 1}[guess.kind]
    return (preferred, guess.documents, guess.path)


def _outermost(folders: set[str]) -> tuple[str, ...]:
    kept: list[str] = []
    for folder in sorted(folders, key=lambda f: (f.count("/"), f)):
        if folder == ".":
            continue
        if not any(folder == k or folder.startswith(k + "/") for k in kept):
            kept.append(folder)
    return tuple(sorted(kept))


def _rel(path: Path, root: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return "" if rel == "." else rel


def _prefix(path: Path) -> bytes:
    try:
        if not path.is_file():
            return b""
        with path.open("rb") as handle:
            return handle.read(_PREFIX_BYTES)
    except OSError:
        return b""


def _looks_like_documents(path: Path) -> bool:
    """A JSONL corpus line has `id` and `text`; a golden dataset line has `query_id`."""
    first = _prefix(path).split(b"\n", 1)[0]
    return b'"id"' in first and b'"text"' in first and b'"query_id"' not in first


def _count_lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return 0


def _is_bear(path: Path) -> bool:
    prefix = _prefix(path)
    return prefix.startswith(_SQLITE_MAGIC) and b"ZSFNOTE" in prefix


def _is_retrieval_code(path: Path, rel: str) -> bool:
    folders = rel.split("/") if rel else []
    if any(folder.lower() in _TEST_DIRS for folder in folders):
        return False
    words = {w for part in (*folders, path.stem) for w in _NAME_WORDS.findall(part.lower())}
    if words & {"test", "tests", "conftest"}:
        return False
    if words & set(RETRIEVAL_NAMES):
        return True
    text = _prefix(path).decode("utf-8", "replace")
    return bool(_RETRIEVAL_MARKERS.search(text) or _RETRIEVER_DEFINITIONS.search(text))
