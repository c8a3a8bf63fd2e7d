"""What `retrieval-eval init` finds in a repository: the corpus and the retrieval code.

Detection is a guess the user confirms: `init` prints what it chose and why, and
`--corpus` overrides it. Nothing here reads file contents beyond a small prefix, except the
Python modules of the retrieval code, which are parsed (never imported) to find the object
`[retrievers.custom]` can call: each kind of entry point is one rule in `WIRING_RULES`.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from retrieval_eval.load.markdown_notes import count_notes, is_note_name

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
# A retrieval module longer than this is not parsed for its entry point (it is still code).
_PARSED_BYTES = 512 * 1024
_MAX_FILES = 20_000
# The members a factory's object must have (retrieval/external/factory_host.py checks them).
CONTRACT_METHODS = ("index", "search", "describe")


@dataclass(frozen=True)
class CorpusGuess:
    path: str  # relative to the repository, with / separators
    kind: str  # "markdown", "jsonl", "beir" or "bear"
    documents: int  # notes, lines or 0 when not counted
    reason: str


@dataclass(frozen=True)
class Wiring:
    """A retriever init can configure as found: `[retrievers.<retriever>]` holds `table`,
    and every dataset file is served by it."""

    retriever: str  # a retriever name of [dataset_retrievers]: "custom"
    table: Mapping[str, object]  # e.g. {"python": "search.retriever:make_retriever"}
    file: str  # the module it was found in, relative, / separators
    reason: str  # what was found there, for init's output and the configuration's comment


@dataclass(frozen=True)
class AdapterHint:
    """Retrieval code init found but cannot call as it is: the adapter it writes imports
    `symbol` from `module` and calls its `method` (`method` None: `symbol` is a function).
    All None when no Python class or function looked like the search."""

    module: str | None = None  # dotted, importable with `cwd` first on sys.path
    symbol: str | None = None
    method: str | None = None
    file: str | None = None
    cwd: str | None = None


@dataclass(frozen=True)
class PythonModule:
    """A parsed module of the retrieval code, as a wiring rule sees it."""

    file: str  # relative, / separators
    module: str  # dotted name, importable with `cwd` first on sys.path
    cwd: str | None  # "src" for a src/ layout, else None (the repository)
    tree: ast.Module


@dataclass(frozen=True)
class Detected:
    corpus: CorpusGuess | None
    code_dirs: tuple[str, ...]  # folders holding retrieval code, relative, / separators
    # Markdown in a documentation folder (`docs/`), not chosen while anything else was found.
    skipped_docs: CorpusGuess | None = None
    wiring: Wiring | None = None
    adapter: AdapterHint | None = None
    modules: tuple[PythonModule, ...] = field(default=(), repr=False)


def detect(root: Path) -> Detected:
    markdown: dict[str, int] = {}
    candidates: list[CorpusGuess] = []
    code_dirs: set[str] = set()
    modules: list[PythonModule] = []
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
                parsed = _parse_module(path, root) if path.suffix == ".py" else None
                if parsed is not None:
                    modules.append(parsed)
    roots = [_loader_count(guess, root) for guess in _markdown_roots(markdown)]
    docs = [r for r in roots if _in_docs(r.path)]
    candidates.extend(r for r in roots if not _in_docs(r.path))
    corpus = max(candidates, key=_rank, default=None)
    in_docs = max(docs, key=_rank, default=None)
    found = Detected(
        corpus=corpus,
        code_dirs=_outermost(code_dirs),
        skipped_docs=in_docs,
        wiring=wire(modules),
        adapter=adapter_hint(modules) if code_dirs else None,
        modules=tuple(modules),
    )
    if corpus is None and in_docs is not None:
        # Nothing else to choose: a documentation folder is the corpus (docs/notes/ often is).
        reason = f"{in_docs.documents} Markdown notes in a documentation folder"
        return replace(
            found,
            corpus=CorpusGuess(in_docs.path, "markdown", in_docs.documents, reason),
            skipped_docs=None,
        )
    return found


def _loader_count(guess: CorpusGuess, root: Path) -> CorpusGuess:
    """The folder's notes as the corpus loader counts them (README.md and build/ included),
    so init's count is the number of documents a run indexes, less empty notes."""
    notes = count_notes(root / guess.path)
    return CorpusGuess(guess.path, guess.kind, notes, f"{notes} Markdown notes")


# --- Wiring: the object [retrievers.custom] can call -----------------------------------

WiringRule = Callable[[PythonModule], Wiring | None]


def wire(modules: list[PythonModule]) -> Wiring | None:
    """The first rule of `WIRING_RULES` that matches a module (modules in path order)."""
    for rule in WIRING_RULES:
        for module in sorted(modules, key=lambda m: (m.file.count("/"), m.file)):
            wiring = rule(module)
            if wiring is not None:
                return wiring
    return None


def _contract_classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    """Top-level classes with `name`, `index`, `search` and `describe`."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        methods = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
        if all(name in methods for name in CONTRACT_METHODS) and _has_name(node):
            found[node.name] = node
    return found


def _has_name(node: ast.ClassDef) -> bool:
    for item in ast.walk(node):
        targets: list[ast.expr] = []
        if isinstance(item, ast.Assign):
            targets = item.targets
        elif isinstance(item, ast.AnnAssign):
            targets = [item.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "name":
                return True
            if (
                isinstance(target, ast.Attribute)
                and target.attr == "name"
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                return True
    return any(
        isinstance(item, ast.FunctionDef)
        and item.name == "name"
        and any(isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list)
        for item in node.body
    )


def _callable_without_arguments(arguments: ast.arguments, *, method: bool) -> bool:
    positional = [*arguments.posonlyargs, *arguments.args][1 if method else 0 :]
    required_positional = len(positional) - len(arguments.defaults)
    required_keywords = sum(default is None for default in arguments.kw_defaults)
    return required_positional <= 0 and required_keywords == 0


def _table(module: PythonModule, attribute: str) -> dict[str, object]:
    table: dict[str, object] = {"python": f"{module.module}:{attribute}"}
    if module.cwd is not None:
        table["cwd"] = module.cwd
    return table


def _factory_rule(module: PythonModule) -> Wiring | None:
    """A module-level function, callable with no arguments, that returns (by its
    annotation or a `return` of a call) a class of the module meeting the contract."""
    classes = _contract_classes(module.tree)
    for node in module.tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        if not _callable_without_arguments(node.args, method=False):
            continue
        returned = {_called_name(node.returns)} | {
            _called_name(item.value) for item in ast.walk(node) if isinstance(item, ast.Return)
        }
        made = sorted(name for name in returned if name in classes)
        if made:
            return Wiring(
                "custom",
                _table(module, node.name),
                module.file,
                f"{module.file}: {node.name}() returns {made[0]}, which has name, "
                + ", ".join(f"{m}()" for m in CONTRACT_METHODS),
            )
    return None


def _class_rule(module: PythonModule) -> Wiring | None:
    """A class meeting the contract whose constructor needs no argument."""
    for name, node in _contract_classes(module.tree).items():
        init = next(
            (i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "__init__"),
            None,
        )
        if init is None or _callable_without_arguments(init.args, method=True):
            return Wiring(
                "custom",
                _table(module, name),
                module.file,
                f"{module.file}: class {name} has name, "
                + ", ".join(f"{m}()" for m in CONTRACT_METHODS),
            )
    return None


def _called_name(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value  # a string annotation: -> "DocsSearch"
    return None


# Each kind of entry point init can wire, most specific first. A new kind (a framework's
# retriever object, say) is one more function here.
WIRING_RULES: tuple[WiringRule, ...] = (_factory_rule, _class_rule)


def adapter_hint(modules: list[PythonModule]) -> AdapterHint:
    """The class or function an adapter should call: the first class with a `search` or
    `retrieve` method, else the first such top-level function."""
    ordered = sorted(modules, key=lambda m: (m.file.count("/"), m.file))
    for module in ordered:
        for node in module.tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            method = next(
                (
                    item.name
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and _SEARCH_NAME.match(item.name)
                ),
                None,
            )
            if method is not None:
                return AdapterHint(module.module, node.name, method, module.file, module.cwd)
    for module in ordered:
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef) and _SEARCH_NAME.match(node.name):
                return AdapterHint(module.module, node.name, None, module.file, module.cwd)
    return AdapterHint()


_SEARCH_NAME = re.compile(r"^(?:search|retrieve|query)\w*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _parse_module(path: Path, root: Path) -> PythonModule | None:
    rel = path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    cwd = None
    if len(parts) > 1 and parts[0] == "src":
        cwd, parts = "src", parts[1:]
    if not parts or not all(_IDENTIFIER.match(part) for part in parts):
        return None  # not importable by that name (`my-search/x.py`)
    try:
        if path.stat().st_size > _PARSED_BYTES:
            return None
        tree = ast.parse(path.read_bytes(), filename=str(rel))
    except (OSError, SyntaxError, ValueError):
        return None
    return PythonModule(rel.as_posix(), ".".join(parts), cwd, tree)


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
