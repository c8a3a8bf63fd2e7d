"""What `retrieval-eval init` detects: the user's retriever and a corpus in `docs/`,
and what it says when it finds neither."""

from __future__ import annotations

import json
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.author.detect import (
    COLLECTION_PLACEHOLDER,
    ID_KEY_PLACEHOLDER,
    Detected,
    detect,
)
from retrieval_eval.retrieval.config import FrameworkConfig
from retrieval_eval.retrieval.external.engines_config import ENGINE_CONFIGS
from retrieval_eval.retrieval.external.frameworks import FRAMEWORKS
from tests.author.cli import retrieval_eval


def _paths(repo: Path) -> list[str]:
    workflow: dict[Any, Any] = yaml.safe_load(
        (repo / ".github/workflows/retrieval-eval.yml").read_text()
    )
    (step,) = [s for s in workflow["jobs"]["evaluate"]["steps"] if "paths" in s.get("with", {})]
    paths: str = step["with"]["paths"]
    return paths.split()


def _notes(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"note-{n}.md").write_text(f"# Note {n}\n\nAbout topic {n}.\n")


def _keyword_fixtures(repo: Path) -> None:
    """Twenty human-labelled keyword fixtures: query ``wordN`` expects page ``page-N``."""
    fixtures = [
        {
            "query_id": f"kw-{n}",
            "query": f"word{n}",
            "retrieval_type": "keyword",
            "expected_top_k_ids": [f"page-{n}"],
            "ground_truth_source": "human-annotated",
        }
        for n in range(20)
    ]
    (repo / "datasets" / "keyword.jsonl").write_text(
        "".join(json.dumps(f) + "\n" for f in fixtures)
    )


@pytest.mark.parametrize(
    ("name", "text", "folder"),
    [
        # A TF-IDF module of the standard library alone: named for what it does.
        ("search/retriever.py", "import math\n\nclass DocsSearch:\n    pass\n", "search"),
        # Named neutrally, but it defines the retriever.
        ("app/lib/engine.py", "class DocsSearch:\n    def search(self, q): ...\n", "app/lib"),
        ("src/rag/store.py", "VALUE = 1\n", "src/rag"),
        ("svc/find.ts", "export async function retrieve(q: string) {}\n", "svc"),
    ],
)
def test_the_users_retriever_is_detected_and_in_the_workflow_paths(
    tmp_path: Path, name: str, text: str, folder: str
) -> None:
    _notes(tmp_path / "kb", 3)
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_search.py").write_text("def test_search(): ...\n")

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"retrieval code: {folder}\n" in result.stdout
    assert "no retrieval code found" not in result.stderr
    assert _paths(tmp_path)[0] == f"{folder}/**"
    assert "tests/**" not in _paths(tmp_path)  # tests do not change the numbers


def test_no_retriever_found_is_a_loud_warning_with_the_line_to_add(tmp_path: Path) -> None:
    _notes(tmp_path / "kb", 3)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "web.py").write_text("print('hello')\n")

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0
    assert "warning: no retrieval code found" in result.stderr
    assert "[retrievers.custom]" in result.stderr
    assert 'python = "module:factory"' in result.stderr
    assert "`paths` in .github/workflows/retrieval-eval.yml" in result.stderr


@pytest.mark.parametrize(
    ("table", "files", "expected"),
    [
        ('python = "lib.engine.tfidf:make"', ["lib/engine/tfidf.py"], "lib/engine/**"),
        pytest.param('python = "lib.engine:make"', ["lib/engine/__init__.py"], "lib/engine/**",
                     marks=pytest.mark.slow),
        ('python = "my_search:make"', ["my_search.py"], "my_search.py"),
        ('command = ["python", "tools/serve/search_cli.py"]', ["tools/serve/search_cli.py"],
         "tools/serve/**"),
    ],
)  # fmt: skip
def test_a_configured_custom_retriever_is_in_paths_and_survives_force(
    tmp_path: Path, table: str, files: list[str], expected: str
) -> None:
    _notes(tmp_path / "kb", 3)
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("def make(): ...\n")
    assert retrieval_eval("init", cwd=tmp_path).returncode == 0
    config = tmp_path / "retrieval-eval.toml"
    config.write_text(config.read_text() + f"\n[retrievers.custom]\n{table}\n")

    result = retrieval_eval("init", "--force", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert expected in _paths(tmp_path)
    assert f"[retrievers.custom]\n{table}\n" in config.read_text()  # --force kept it
    again = retrieval_eval("init", cwd=tmp_path)
    assert "retrieval-eval.toml: unchanged" in again.stdout


def test_a_markdown_corpus_in_docs_notes_is_detected(tmp_path: Path) -> None:
    _notes(tmp_path / "docs" / "notes", 68)
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "retriever.py").write_text("class DocsSearch: ...\n")

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "corpus: docs (68 Markdown notes in a documentation folder)" in result.stdout
    assert 'corpus = "docs"' in (tmp_path / "retrieval-eval.toml").read_text()
    assert "docs/**" in _paths(tmp_path)


def test_docs_skipped_for_another_corpus_is_said_with_the_flag_to_use(tmp_path: Path) -> None:
    _notes(tmp_path / "docs", 68)
    _notes(tmp_path / "kb", 5)

    result = retrieval_eval("init", cwd=tmp_path)

    assert "corpus: kb (5 Markdown notes)" in result.stdout
    assert "68 Markdown files in docs/ were skipped because" in result.stderr
    assert "retrieval-eval init --corpus docs --force" in result.stderr


CONTRACT = """\
from retrieval_eval.api import Corpus, Hit, SearchResult


class DocsSearch:
    name = "docs"

    def __init__(self, boost: float = 1.0):
        self.boost = boost

    def index(self, corpus: Corpus) -> None:
        self.ids = sorted(d.id for d in corpus.documents)

    def search(self, query, k, tags=()):
        return SearchResult(hits=tuple(Hit(i, 1.0, "") for i in self.ids[:k]))

    def describe(self):
        return {"boost": self.boost}
"""


@pytest.mark.parametrize(
    ("module", "extra", "python", "cwd"),
    [
        # A factory the module defines, found by its return annotation or its `return`.
        ("search/retriever.py", "\ndef make_retriever() -> DocsSearch:\n    return DocsSearch()\n",
         "search.retriever:make_retriever", None),
        ("search/retriever.py", "\ndef build(boost=2.0):\n    return DocsSearch(boost)\n",
         "search.retriever:build", None),
        # No factory: the class itself, whose constructor needs no argument.
        ("search/retriever.py", "", "search.retriever:DocsSearch", None),
        # A src/ layout is imported from src/.
        ("src/docs_app/search.py", "", "docs_app.search:DocsSearch", "src"),
    ],
)  # fmt: skip
def test_a_retriever_meeting_the_contract_is_wired_for_every_dataset(
    tmp_path: Path, module: str, extra: str, python: str, cwd: str | None
) -> None:
    _notes(tmp_path / "kb", 3)
    (tmp_path / module).parent.mkdir(parents=True)
    (tmp_path / module).write_text(CONTRACT + extra)

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"retriever: custom, python = {python!r}" in result.stdout
    config = tomllib.loads((tmp_path / "retrieval-eval.toml").read_text())
    expected: dict[str, object] = {"python": python, **({"cwd": cwd} if cwd else {})}
    assert config["retrievers"]["custom"] == expected
    assert config["dataset_retrievers"] == dict.fromkeys(
        ("semantic.jsonl", "keyword.jsonl", "hybrid.jsonl"), "custom"
    )
    # What init wrote is what a run reads: the factory is found and meets the contract.
    again = retrieval_eval("init", cwd=tmp_path)
    assert "retrieval-eval.toml: unchanged" in again.stdout


TEAM_SEARCH = """\
import math


class DocsSearch:
    \"\"\"The team's TF-IDF search: built from documents, searched by text.\"\"\"

    def __init__(self, documents):
        self.documents = {d.id: (set(d.text.lower().split()), d.text) for d in documents}

    def search(self, query, k):
        words = set(query.lower().split())
        scored = [(len(words & t), i, text) for i, (t, text) in self.documents.items()]
        ranked = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1]))[:k]
        return [(doc_id, float(score), text) for score, doc_id, text in ranked]
"""


def _uncommented_adapter(config: str) -> str:
    block = config.split(
        "make its two EDIT lines call your code, and uncomment the two tables after it.\n#\n"
    )[1]
    source = block.split("\n#\n# [retrievers.custom]")[0]
    return (
        "\n".join(line.removeprefix("#").removeprefix(" ") for line in source.splitlines()) + "\n"
    )


def test_code_init_cannot_call_gets_a_commented_adapter_that_runs_once_edited(
    tmp_path: Path,
) -> None:
    """The adapter imports the contract from retrieval_eval.api and the team's class from its
    module; with its build line edited and its tables uncommented, `run` evaluates it."""
    (tmp_path / "docs").mkdir()
    for n in range(20):
        (tmp_path / "docs" / f"page-{n}.md").write_text(f"# Page {n}\n\nword{n} common text\n")
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "__init__.py").write_text("")
    (tmp_path / "search" / "retriever.py").write_text(TEAM_SEARCH)

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "retriever: not wired; retrieval-eval.toml holds a commented adapter" in result.stderr
    config_path = tmp_path / "retrieval-eval.toml"
    config = config_path.read_text()
    assert "retrievers" not in tomllib.loads(config)  # nothing runs until the user says so
    adapter = _uncommented_adapter(config)
    assert "from retrieval_eval.api import Corpus, Hit, SearchResult" in adapter
    assert "from search.retriever import DocsSearch" in adapter
    assert "save the adapter below as search/retrieval_eval_adapter.py" in config
    # The user's edit: build the index from the documents.
    edited = adapter.replace("DocsSearch(...)", "DocsSearch(corpus.documents)")
    (tmp_path / "search" / "retrieval_eval_adapter.py").write_text(edited)
    tables = config.split("#\n# [retrievers.custom]\n", 1)[1].split("\n\n", 1)[0]
    uncommented = "\n".join(line.removeprefix("# ") for line in tables.splitlines())
    config_path.write_text(config + "\n[retrievers.custom]\n" + uncommented + "\n")
    assert 'python = "search.retrieval_eval_adapter:make_retriever"' in uncommented
    _keyword_fixtures(tmp_path)

    run = retrieval_eval("run", cwd=tmp_path)

    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((tmp_path / "retrieval-eval-report" / "report.json").read_text())
    (dataset,) = report["datasets"]
    assert dataset["retriever"] == "custom"
    assert dataset["aggregates"]["mrr@10"]["value"] == 1.0
    assert dataset["collapse"] is None  # it does not collapse results itself


def test_init_counts_the_notes_a_run_indexes(tmp_path: Path) -> None:
    """README.md and CONTRIBUTING.md in the notes folder are documents too: init's count is
    the loader's, the count `corpus ids` gives."""
    _notes(tmp_path / "kb", 5)
    (tmp_path / "kb" / "README.md").write_text("# About this knowledge base\n\nHello.\n")
    (tmp_path / "kb" / "build").mkdir()
    (tmp_path / "kb" / "build" / "CONTRIBUTING.md").write_text("# How to add a page\n\nAsk.\n")

    result = retrieval_eval("init", cwd=tmp_path)
    listed = retrieval_eval("corpus", "ids", cwd=tmp_path)

    assert "corpus: kb (7 Markdown notes)" in result.stdout
    assert listed.stderr.startswith("7 documents in ")
    assert len(listed.stdout.splitlines()) == 7


def test_the_pull_request_workflow_uploads_the_report_the_comment_links_to(
    tmp_path: Path,
) -> None:
    _notes(tmp_path / "kb", 3)
    assert retrieval_eval("init", cwd=tmp_path).returncode == 0
    workflow: dict[Any, Any] = yaml.safe_load(
        (tmp_path / ".github/workflows/retrieval-eval.yml").read_text()
    )
    upload = workflow["jobs"]["evaluate"]["steps"][-1]
    assert upload["uses"] == "actions/upload-artifact@v4"
    assert upload["if"] == "always()"  # a failing gate is when the report is read
    assert upload["with"] == {"name": "retrieval-eval-report", "path": "retrieval-eval-report/"}


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(source=st.text(max_size=400))
def test_any_module_text_is_detected_without_failing(source: str) -> None:
    """Detection parses the retrieval code, never imports it: whatever the file holds,
    init gets a wiring, an adapter or neither, and no exception."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "search").mkdir()
        (root / "search" / "retriever.py").write_text(source, encoding="utf-8", errors="replace")
        detected = detect(root)
    assert detected.code_dirs == ("search",)
    assert detected.adapter is not None
    _check_wiring(detected)


def _check_wiring(detected: Detected) -> None:
    """A wiring names the module it was found in and a table its retriever accepts."""
    wiring = detected.wiring
    if wiring is None:
        return
    assert wiring.file == "search/retriever.py"
    if wiring.retriever == "custom":
        assert str(wiring.table["python"]).startswith("search.retriever:")
    elif wiring.retriever in FRAMEWORKS:
        FrameworkConfig.model_validate(wiring.table)
        assert str(wiring.table["object"]).startswith("search.retriever:")
    else:
        ENGINE_CONFIGS[wiring.retriever].model_validate(wiring.table)


# Lines a module building a framework's retriever or reaching an engine is made of.
_FRAGMENTS = [
    "from langchain_core.retrievers import BaseRetriever",
    "from llama_index.core import VectorStoreIndex",
    "import lancedb",
    "from qdrant_client import QdrantClient",
    "from pymilvus import MilvusClient",
    "NAME = 'docs'",
    "NAME = 'not a name!'",
    "client = QdrantClient(path='q')",
    "client = MilvusClient('m.db')",
    "db = lancedb.connect('l')",
    "table = db.open_table(NAME)",
    "client.search(collection_name=NAME, data=[])",
    "client.query_points('docs', query=[1.0])",
    "retriever = store.as_retriever()",
    "r: BaseRetriever = build()",
    "def make():\n    return index.as_retriever(similarity_top_k=5)",
    "def make(x):\n    return index.as_retriever()",
    "def make() -> BaseRetriever:\n    r = BM25Retriever.from_documents(docs)\n    return r",
    "x = Thing.from_documents(",
]


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(st.sampled_from(_FRAGMENTS), max_size=8))
def test_any_framework_or_engine_module_is_detected_without_failing(lines: list[str]) -> None:
    """Modules made of the lines the framework and engine rules read, in any order and
    combination (some not valid Python): detection never fails, and what it wires is a
    table the retriever's own settings accept."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "search").mkdir()
        (root / "search" / "retriever.py").write_text("\n".join(lines) + "\n")
        detected = detect(root)
    _check_wiring(detected)


@settings(max_examples=30, deadline=None)
@given(
    method_names=st.sets(st.sampled_from(["name", "index", "search", "describe", "close"])),
    init_args=st.sampled_from(["", ", x", ", x=1", ", *, x", ", *, x=1"]),
)
def test_only_a_class_with_the_whole_contract_and_a_bare_constructor_is_wired(
    method_names: set[str], init_args: str
) -> None:
    body = "".join(
        "    name = 'n'\n" if m == "name" else f"    def {m}(self, *a): ...\n"
        for m in sorted(method_names)
    )
    source = f"class Engine:\n    def __init__(self{init_args}): ...\n{body}"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "search").mkdir()
        (root / "search" / "retriever.py").write_text(source)
        detected = detect(root)
    whole = {"name", "index", "search", "describe"} <= method_names
    bare = init_args in ("", ", x=1", ", *, x=1")
    assert (detected.wiring is not None) == (whole and bare)


def test_a_kept_configuration_is_not_announced_as_wired(tmp_path: Path) -> None:
    """A repository configured before init wired retrievers: init keeps its file and says
    what --force would write, instead of claiming a retriever the file does not name."""
    _notes(tmp_path / "kb", 3)
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "kb"\n')
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "retriever.py").write_text(
        CONTRACT + "\ndef make_retriever() -> DocsSearch:\n    return DocsSearch()\n"
    )

    kept = retrieval_eval("init", cwd=tmp_path)
    forced = retrieval_eval("init", "--force", cwd=tmp_path)

    assert "retriever: custom" not in kept.stdout
    assert "but retrieval-eval.toml exists and was kept; run `retrieval-eval init --force`" in (
        kept.stderr
    )
    assert "retriever: custom, python = 'search.retriever:make_retriever'" in forced.stdout
    config = tomllib.loads((tmp_path / "retrieval-eval.toml").read_text())
    assert config["corpus"] == "kb"
    assert config["retrievers"]["custom"] == {"python": "search.retriever:make_retriever"}


@pytest.mark.parametrize(
    ("source", "retriever", "table"),
    [
        # LangChain: a function returning `.as_retriever()`, directly or through a name.
        ("from langchain_core.vectorstores import InMemoryVectorStore\n"
         "def make_retriever():\n    store = InMemoryVectorStore(embedding=E())\n"
         "    return store.as_retriever(search_kwargs={'k': 10})\n",
         "langchain", {"object": "search.retriever:make_retriever"}),
        ("from langchain_community.retrievers import BM25Retriever\n"
         "def build(k=10):\n    retriever = BM25Retriever.from_documents(DOCS, k=k)\n"
         "    return retriever\n",
         "langchain", {"object": "search.retriever:build"}),
        # A module-level attribute, and a function annotated as returning a BaseRetriever.
        ("from langchain_qdrant import QdrantVectorStore\nfrom qdrant_client import QdrantClient\n"
         "retriever = QdrantVectorStore(client=QdrantClient(), collection_name='docs')"
         ".as_retriever()\n",
         "langchain", {"object": "search.retriever:retriever"}),
        ("from langchain_core.retrievers import BaseRetriever\n"
         "def team() -> BaseRetriever:\n    return ours()\n",
         "langchain", {"object": "search.retriever:team"}),
        # LlamaIndex: an index's retriever, or one of its retriever classes.
        ("from llama_index.core import VectorStoreIndex\n"
         "index = VectorStoreIndex.from_documents(DOCS)\n"
         "retriever = index.as_retriever(similarity_top_k=10)\n",
         "llamaindex", {"object": "search.retriever:retriever"}),
        ("from llama_index.core.retrievers import VectorIndexRetriever\n"
         "def make():\n    return VectorIndexRetriever(index=INDEX)\n",
         "llamaindex", {"object": "search.retriever:make"}),
        # Engines: the collection when a literal (or a module constant) names it.
        ("from qdrant_client import QdrantClient\nCOLLECTION = 'docs'\n"
         "client = QdrantClient(url=URL)\n"
         "def search(v):\n    return client.query_points(COLLECTION, query=v)\n",
         "qdrant", {"index": "existing", "collection": "docs"}),
        ("import lancedb\ndb = lancedb.connect('data/db')\ntable = db.open_table('notes')\n",
         "lancedb", {"index": "existing", "collection": "notes"}),
        ("from pymilvus import MilvusClient\nclient = MilvusClient('milvus.db')\n"
         "def search(v):\n    return client.search(collection_name='kb', data=[v])\n",
         "milvus", {"index": "existing", "collection": "kb"}),
        # Not a literal: a placeholder the user edits, said so in a comment.
        ("from pymilvus import MilvusClient\nimport os\nclient = MilvusClient(URI)\n"
         "def search(v):\n    return client.search(collection_name=os.environ['C'], data=[v])\n",
         "milvus", {"index": "existing", "collection": COLLECTION_PLACEHOLDER}),
    ],
)  # fmt: skip
def test_init_writes_the_table_of_a_framework_retriever_or_engine_collection(
    tmp_path: Path, source: str, retriever: str, table: dict[str, object]
) -> None:
    _notes(tmp_path / "kb", 3)
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "retriever.py").write_text(source)

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert f"retriever: {retriever}, " in result.stdout
    text = (tmp_path / "retrieval-eval.toml").read_text()
    config = tomllib.loads(text)
    expected = dict(table)
    if retriever in FRAMEWORKS:
        expected["id_key"] = ID_KEY_PLACEHOLDER
        # What the placeholder stands for, on the lines above it.
        assert "# EDIT: the metadata key of each" in text.split("id_key =")[0]
    if expected.get("collection") == COLLECTION_PLACEHOLDER:
        assert "# EDIT: the name of the collection" in text.split("collection =")[0]
    assert config["retrievers"] == {retriever: expected}
    assert config["dataset_retrievers"] == dict.fromkeys(
        ("semantic.jsonl", "keyword.jsonl", "hybrid.jsonl"), retriever
    )


@pytest.mark.parametrize(
    "source",
    [
        # Both frameworks imported: which one the object is, parsing cannot tell.
        "import langchain\nimport llama_index\nretriever = index.as_retriever()\n",
        # A framework imported, but the retriever built only with an argument.
        "from langchain_core.vectorstores import InMemoryVectorStore\n"
        "def make(store):\n    return store.as_retriever()\n",
        # `.as_retriever()` without either framework imported.
        "retriever = store.as_retriever()\n",
        # An engine's package imported, its client never made.
        "import qdrant_client\nVERSION = qdrant_client.__version__\n",
    ],
)
def test_what_parsing_cannot_settle_is_not_wired(tmp_path: Path, source: str) -> None:
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "retriever.py").write_text(source)
    assert detect(tmp_path).wiring is None


LANGCHAIN_BM25 = """from pathlib import Path

from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document

NOTES = Path(__file__).resolve().parents[1] / "docs"


def make_retriever():
    chunks = [
        Document(paragraph, metadata={"page": page.stem})
        for page in sorted(NOTES.glob("*.md"))
        for paragraph in page.read_text().split("\\n\\n")
    ]
    return BM25Retriever.from_documents(chunks, k=10)
"""


@pytest.mark.slow
def test_init_wires_a_langchain_retriever_that_runs_once_its_id_key_is_filled_in(
    tmp_path: Path,
) -> None:
    """The team's own LangChain BM25 retriever: init writes [retrievers.langchain] with the
    id key to fill in; a run on the placeholder stops naming the keys results carry, and
    with the key filled in, `run` evaluates the retriever and reports its collapse."""
    (tmp_path / "docs").mkdir()
    for n in range(20):
        (tmp_path / "docs" / f"page-{n}.md").write_text(f"# Page {n}\n\nword{n} common text\n")
    (tmp_path / "search").mkdir()
    (tmp_path / "search" / "__init__.py").write_text("")
    (tmp_path / "search" / "retriever.py").write_text(LANGCHAIN_BM25)

    result = retrieval_eval("init", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "retriever: langchain, object = 'search.retriever:make_retriever'" in result.stdout
    _keyword_fixtures(tmp_path)
    placeholder = retrieval_eval("run", cwd=tmp_path)
    assert placeholder.returncode == 2, placeholder.stdout + placeholder.stderr
    assert f"{ID_KEY_PLACEHOLDER!r}" in placeholder.stderr
    assert "(its keys: page)" in placeholder.stderr

    config_path = tmp_path / "retrieval-eval.toml"
    config_path.write_text(
        config_path.read_text().replace(f'id_key = "{ID_KEY_PLACEHOLDER}"', 'id_key = "page"')
    )
    run = retrieval_eval("run", cwd=tmp_path)

    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((tmp_path / "retrieval-eval-report" / "report.json").read_text())
    (dataset,) = report["datasets"]
    assert dataset["retriever"] == "langchain"
    assert dataset["aggregates"]["mrr@10"]["value"] == 1.0
    # Each page is two chunks (title, body): the adapter asks deeper until 10 pages a query
    # stand behind more than 10 chunks. Counted in the report, not in the retriever's
    # settings (which the baseline keeps and compares).
    collapse = dataset["collapse"]
    assert collapse["documents"] == 20 * 10
    histogram = {int(n): documents for n, documents in collapse["histogram"].items()}
    assert sum(n * documents for n, documents in histogram.items()) == collapse["results"]
    assert sum(histogram.values()) == collapse["documents"] < collapse["results"]
    assert histogram.get(2, 0) > 0
    assert "collapse" not in json.dumps(dataset["retriever_config"])
    markdown = (tmp_path / "retrieval-eval-report" / "report.md").read_text()
    shown = ", ".join(f"{documents} from {n}" for n, documents in sorted(histogram.items()))
    assert (
        f"Collapse: {collapse['results']} results (chunks) made {collapse['documents']} "
        f"documents (documents from 1, 2, ... results: {shown}); informational, not gated."
    ) in markdown
    # Sharded, each shard counts its own queries, and the merge adds them up.
    shards = []
    for index in (1, 2):
        shard = tmp_path / f"shard-{index}"
        done = retrieval_eval(
            "run", "--shard", f"{index}/2", "--report-dir", str(shard), cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        shards.append(str(shard))
    merged = retrieval_eval("merge", "--report-dir", "merged", *shards, cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    (merged_dataset,) = json.loads((tmp_path / "merged" / "report.json").read_text())["datasets"]
    assert merged_dataset["collapse"] == collapse
