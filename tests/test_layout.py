"""The package reads as the pipeline it runs, and its imports point one way.

Each stage may import itself, the stages before it and the shared modules; it
never imports a later stage, a tool or an edge. A tool is a program of its own
beside the run: it may use the stages up to a point, and only its own command
imports it. docs/architecture.md draws the same order. The walk reads every
import statement in ``src/`` (also those inside functions), so a lazy import
cannot hide an upward dependency, nor a circle between two modules of one unit.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "retrieval_eval"
TESTS = Path(__file__).resolve().parent

# The pipeline, first to last. `settings` composes the stages' own configuration types
# (retriever tables, judge pricing, measure names), so it comes after them; `compare` is the
# first stage that reads the whole settings object. `config` is the option table built from
# the settings' declarations: which commit each is read from, the flags, the documentation.
# `pipeline` calls every stage in turn; `prepare` is how every edge prepares a run (settings,
# secrets withheld, input roots). `author` holds the authoring steps behind `init`, `generate`,
# `review` and `import`. `usecases` composes them, one module per thing a user does, for the
# edges to call.
STAGES = (
    "load",
    "tools.trec.text",
    "validate",
    "index",
    "retrieval",
    "score",
    "settings",
    "config",
    "compare",
    "render",
    "pipeline",
    "prepare",
    "author",
    "usecases",
)


@dataclass(frozen=True)
class Tool:
    """A unit that is its own program, not a stage of the run."""

    after: str  # the last stage it may import (and every stage before it)
    imported_by: frozenset[str]  # the only modules outside the tool that may import it


# `tools.trec` is `retrieval-eval trec`, trec_eval over run and qrels files: it reuses
# score/'s kernels and measure names, and the run never calls it. Its numpy reader of TREC
# text (`tools.trec.text`) is a layer of the run as well, just after `load` (it reads
# through load/input_files.py's limits): the `run-file` retriever reads runs with it and
# score/ranked.py takes its array types from it, while nothing of the run imports the
# tool's scoring.
# `api` is the public contract a team's factory or adapter imports (docs/retrievers.md): it
# re-exports the retriever protocol's types, and nothing inside the package imports it.
TOOLS: Mapping[str, Tool] = {
    "tools.trec": Tool(after="score", imported_by=frozenset({"retrieval_eval.commands.trec"})),
    "api": Tool(after="retrieval", imported_by=frozenset()),
}
# Small modules every stage may use; they import nothing but each other. `trust` keeps
# secrets out of child processes and redacts every line written out; `sharding` picks a
# shard's slice of chunks or queries; `claude_api` is the one Messages API call and reply
# parser the judge, the reranker and `generate` share; `deadline` is the whole evaluation's
# time bound, and the step it names when the bound passes.
SHARED = frozenset(
    {
        "",
        "errors",
        "fileio",
        "vocabulary",
        "results",
        "progress",
        "deadline",
        "trust",
        "sharding",
        "claude_api",
        "tools",  # the tools' package: a docstring
    }
)
# The edges: they call the use cases, the pipeline or the stages, nothing calls them.
EDGES = frozenset({"action", "commands", "cli", "__main__"})


# Units one level down: each tool under tools/, and the tool's layer the run may import.
NESTED_UNITS = ("tools.trec.text", "tools.trec")


def unit_of(module: str) -> str:
    """`retrieval_eval.score.measurements` -> `score`; `retrieval_eval` -> ``""``;
    `retrieval_eval.tools.trec.text.files` -> `tools.trec.text`."""
    inner = module.removeprefix("retrieval_eval.")
    for unit in NESTED_UNITS:
        if inner == unit or inner.startswith(f"{unit}."):
            return unit
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported retrieval_eval module) for every import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # `from retrieval_eval import x` names a submodule when x is one.
            if node.module == "retrieval_eval":
                found += [(node.lineno, f"retrieval_eval.{a.name}") for a in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] == "retrieval_eval"]


def allowed(importer: str, imported: str) -> bool:
    """May module ``importer`` import module ``imported``?"""
    importer_unit, imported_unit = unit_of(importer), unit_of(imported)
    if imported_unit == "__version__":
        imported_unit = ""
    if importer_unit == imported_unit:
        return True
    if imported_unit in TOOLS:
        return importer in TOOLS[imported_unit].imported_by
    if imported_unit in SHARED:
        return True
    if importer_unit in EDGES:
        return True
    if importer_unit in SHARED or imported_unit in EDGES:
        return False
    last = TOOLS[importer_unit].after if importer_unit in TOOLS else importer_unit
    return STAGES.index(imported_unit) <= STAGES.index(last)


def source_files() -> list[Path]:
    """Every module of the package, in every sub-package at any depth."""
    return sorted(PACKAGE.rglob("*.py"))


def violations() -> list[str]:
    found = []
    for path in source_files():
        importer = module_name(path)
        for line, name in imports(path):
            if not allowed(importer, name):
                where = path.relative_to(PACKAGE.parent)
                found.append(f"{where}:{line}: {unit_of(importer)} imports {name}")
    return found


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in source_files()}


def imported_modules(path: Path, known: Mapping[str, Path]) -> set[str]:
    """The package's modules this file imports; ``from a import b`` names ``a.b`` when b is one."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else node.module)
    return {name for name in found if name in known}


def import_graph() -> dict[str, set[str]]:
    """Each module -> the modules of its own unit it imports (package ``__init__`` included)."""
    known = modules()
    return {
        name: {
            other
            for other in imported_modules(path, known)
            if other != name and unit_of(other) == unit_of(name)
        }
        for name, path in known.items()
    }


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One circle ``[a, b, ..., a]`` for each group of modules that import each other.

    The groups are the strongly connected components of more than one module (Tarjan's
    algorithm); each is shown as its shortest circle through its first module by name.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(_shortest_circle(graph, group) for group in groups)


def _shortest_circle(graph: Mapping[str, set[str]], group: set[str]) -> list[str]:
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(graph.get(node, set()) & group):
                if other == start:
                    return [*paths[node], start]
                if other not in paths:
                    paths[other] = [*paths[node], other]
                    following.append(other)
        frontier = following
    raise AssertionError(f"{sorted(group)} is not a circle")


def as_files(circle: list[str]) -> str:
    names = (str(modules()[name].relative_to(PACKAGE.parent)) for name in circle)
    return " -> ".join(names)


def test_every_unit_is_placed() -> None:
    units = {unit_of(module_name(path)) for path in source_files()}
    assert units == set(STAGES) | set(TOOLS) | SHARED | EDGES
    assert not set(STAGES) & set(TOOLS)
    assert all(tool.after in STAGES for tool in TOOLS.values())
    assert all(name in modules() for tool in TOOLS.values() for name in tool.imported_by)


def test_imports_point_down_the_pipeline() -> None:
    assert violations() == []


def test_no_unit_has_an_import_circle() -> None:
    """Two modules of one unit that import each other, directly or through others, are one
    module in two files: neither can be read (or imported) without the other."""
    assert [as_files(circle) for circle in circles(import_graph())] == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c", "a"]]),
        (
            {"a": {"b"}, "b": {"a"}, "x": {"y"}, "y": {"z"}, "z": {"x", "y"}},
            [["a", "b", "a"], ["x", "y", "z", "x"]],
        ),
        ({"a": {"b", "c"}, "b": {"d"}, "c": {"a"}, "d": {"b"}}, [["a", "c", "a"], ["b", "d", "b"]]),
    ],
)
def test_the_circle_finder(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert circles(graph) == expected


def test_a_function_level_import_counts(tmp_path: Path) -> None:
    """A lazy import inside a function is an import too: it closes a circle all the same."""
    source = tmp_path / "lazy.py"
    source.write_text(
        "def later() -> None:\n"
        "    from retrieval_eval.score import kernels\n"
        "    import retrieval_eval.score.stats\n",
        encoding="utf-8",
    )
    found = imported_modules(source, modules())
    assert found == {"retrieval_eval.score.kernels", "retrieval_eval.score.stats"}


@pytest.mark.parametrize(
    ("importer", "imported", "expected"),
    [
        ("retrieval_eval.score.kernels", "retrieval_eval.retrieval.base", True),
        ("retrieval_eval.retrieval.base", "retrieval_eval.score.kernels", False),
        ("retrieval_eval.render.markdown", "retrieval_eval.compare.gate", True),
        ("retrieval_eval.compare.gate", "retrieval_eval.render.markdown", False),
        ("retrieval_eval.load.corpus", "retrieval_eval.errors", True),
        ("retrieval_eval.vocabulary", "retrieval_eval.settings", False),
        ("retrieval_eval.pipeline", "retrieval_eval.action.main", False),
        ("retrieval_eval.action.main", "retrieval_eval.pipeline", True),
        ("retrieval_eval.commands.compare", "retrieval_eval.usecases.compare", True),
        ("retrieval_eval.usecases.compare", "retrieval_eval.prepare", True),
        ("retrieval_eval.pipeline", "retrieval_eval.usecases.compare", False),
        ("retrieval_eval.usecases.tune", "retrieval_eval.commands.tune", False),
        # A tool uses the stages up to its own place, never those after it.
        ("retrieval_eval.tools.trec.kernels", "retrieval_eval.score.kernels", True),
        ("retrieval_eval.tools.trec.report", "retrieval_eval.settings", False),
        ("retrieval_eval.tools.trec.report", "retrieval_eval.compare.gate", False),
        ("retrieval_eval.tools.trec.report", "retrieval_eval.commands.trec", False),
        # Only its own command imports it: no stage, no other edge.
        ("retrieval_eval.commands.trec", "retrieval_eval.tools.trec.report", True),
        ("retrieval_eval.commands.run", "retrieval_eval.tools.trec.report", False),
        ("retrieval_eval.action.main", "retrieval_eval.tools.trec.report", False),
        ("retrieval_eval.score.kernels", "retrieval_eval.tools.trec.kernels", False),
        ("retrieval_eval.pipeline", "retrieval_eval.tools.trec.report", False),
        ("retrieval_eval.tools.trec.report", "retrieval_eval.tools.trec.kernels", True),
        # Its reader of TREC text is a layer just after `load`: the run's readers use it, and
        # it uses nothing after `load`, least of all the tool's scoring.
        ("retrieval_eval.tools.trec.text.tokens", "retrieval_eval.load.input_files", True),
        (
            "retrieval_eval.retrieval.external.run_file",
            "retrieval_eval.tools.trec.text.values",
            True,
        ),
        ("retrieval_eval.score.ranked", "retrieval_eval.tools.trec.text.values", True),
        ("retrieval_eval.tools.trec.join", "retrieval_eval.tools.trec.text.files", True),
        ("retrieval_eval.tools.trec.text.files", "retrieval_eval.tools.trec.hits", False),
        ("retrieval_eval.tools.trec.text.values", "retrieval_eval.score.ranked", False),
        ("retrieval_eval.load.input_files", "retrieval_eval.tools.trec.text.files", False),
    ],
)
def test_the_rule_itself(importer: str, imported: str, expected: bool) -> None:
    assert allowed(importer, imported) is expected


def test_the_walk_reaches_every_sub_package() -> None:
    """retrieval/'s wings are walked like the rest: a lazy import inside one is checked too."""
    walked = {module_name(path) for path in source_files()}
    assert {
        "retrieval_eval.retrieval.builtin",
        "retrieval_eval.retrieval.builtin.dense",
        "retrieval_eval.retrieval.external",
        "retrieval_eval.retrieval.external.custom",
        "retrieval_eval.retrieval.tune",
        "retrieval_eval.retrieval.tune.grid",
    } <= walked


# The tests mirror the package: `tests/<unit>/test_<module>.py` tests `<unit>/<module>.py`
# (`test_<module>_<aspect>.py` when one module has several test files). These suites are
# laid out by threat and by image instead, and keep their own names.
SUITES_OF_THEIR_OWN = ("security", "container")
# Test modules whose subject is not one source module, and what it is.
CROSS_CUTTING = {
    "test_docs.py": "README.md, docs/ and action.yml say what the product does",
    "test_examples.py": "the command retrievers in examples/, run as a user runs them",
    "test_layout.py": "the package's layout, and these names",
    "author/test_quickstart.py": "the README's Quickstart, run as written",
    "author/test_newcomer.py": "a team's first week, init to a regressing pull request",
    "render/test_screenshot_script.py": "scripts/screenshot/, which draws the README's picture",
    "action/test_fake_github.py": "the suite's own fake GitHub API (tests/support/fake_github.py)",
    "bench/test_gate_power.py": "bench/gate_power.py, the gate's error-rate benchmark",
    "bench/test_label_cost.py": "bench/label_cost.py, what labelling a judged tier costs",
    "bench/test_kappa_sample.py": "bench/kappa_sample.py, what a measured κ says on n pairs",
}


def source_modules() -> set[str]:
    """``score/kernels``, ``retrieval/fusion`` (a package), ``pipeline``, ..."""
    return {name.removeprefix("retrieval_eval.").replace(".", "/") for name in modules()}


def module_named_by(test: str, known: set[str]) -> str | None:
    """The source module a test module's path names (``score/test_kernels.py`` ->
    ``score/kernels``); the longest one when an aspect follows
    (``tools/trec/test_report_parity.py`` -> ``tools/trec/report``); None when it names none."""
    path = Path(test)
    name = path.stem.removeprefix("test_")
    if name == path.stem:
        return None
    unit = "" if path.parent == Path(".") else f"{path.parent.as_posix()}/"
    words = name.split("_")
    for count in range(len(words), 0, -1):
        candidate = unit + "_".join(words[:count])
        if candidate in known:
            return candidate
    return None


def listed_test_modules() -> list[str]:
    return sorted(
        path.relative_to(TESTS).as_posix()
        for path in TESTS.rglob("test_*.py")
        if path.relative_to(TESTS).parts[0] not in SUITES_OF_THEIR_OWN
    )


def test_every_test_module_is_named_after_the_source_module_it_tests() -> None:
    known = source_modules()
    unnamed = [
        test
        for test in listed_test_modules()
        if test not in CROSS_CUTTING and module_named_by(test, known) is None
    ]
    assert unnamed == []
    assert [test for test in CROSS_CUTTING if not (TESTS / test).is_file()] == []


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("score/test_kernels.py", "score/kernels"),
        ("tools/trec/test_report_parity.py", "tools/trec/report"),
        ("tools/trec/text/test_tokens.py", "tools/trec/text/tokens"),
        ("retrieval/rerank/test_claude.py", "retrieval/rerank/claude"),
        ("retrieval/test_fusion.py", "retrieval/fusion"),
        ("commands/test_beir.py", "commands/beir"),
        ("test_pipeline.py", "pipeline"),
        ("index/test_embedding_cache.py", "index/embedding_cache"),
        # A name that says nothing about which module, or names one of another unit.
        ("score/test_small_metrics.py", None),
        ("retrieval/test_beir_command.py", None),
        ("test_sharded.py", None),
        ("score/helpers.py", None),
    ],
)
def test_the_naming_rule_itself(test: str, expected: str | None) -> None:
    assert module_named_by(test, source_modules()) == expected


# Modules without a test module of their own while other work is under way: another change
# is creating, moving or testing these right now. The entries go as that work lands; a
# module listed here that has its test module fails the check below, so the list only shrinks.
UNTESTED_FOR_NOW: tuple[str, ...] = ()


def has_logic(path: Path) -> bool:
    """A module with at least one function or method; declarations alone (constants,
    dataclasses and models without methods, type aliases) are tested where they are used."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.walk(tree))


def untested_for_now(module: str) -> bool:
    return any(
        module.startswith(entry) if entry.endswith("/") else module == entry
        for entry in UNTESTED_FOR_NOW
    )


def modules_with_logic() -> set[str]:
    return {
        name.removeprefix("retrieval_eval.").replace(".", "/")
        for name, path in modules().items()
        if path.name != "__init__.py" and has_logic(path)
    }


def test_every_module_with_logic_has_a_test_module_named_after_it() -> None:
    known = source_modules()
    tested = {module_named_by(test, known) for test in listed_test_modules()}
    untested = sorted(modules_with_logic() - tested)
    assert [module for module in untested if not untested_for_now(module)] == []
    # An exact entry whose module now has its test module (or is gone) is stale.
    exact = [entry for entry in UNTESTED_FOR_NOW if not entry.endswith("/")]
    assert [entry for entry in exact if entry not in untested] == []


def test_a_function_is_logic_and_a_declaration_is_not(tmp_path: Path) -> None:
    declared = tmp_path / "declared.py"
    declared.write_text(
        "from dataclasses import dataclass\n"
        "LIMIT = 3\n"
        "@dataclass(frozen=True)\n"
        "class Pair:\n"
        "    left: int\n"
        "    right: int\n",
        encoding="utf-8",
    )
    method = tmp_path / "method.py"
    method.write_text(
        "class Pair:\n    def total(self) -> int:\n        return 0\n", encoding="utf-8"
    )
    assert not has_logic(declared)
    assert has_logic(method)
