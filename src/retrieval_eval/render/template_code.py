"""The report templates' compiled code, kept beside them as Python keeps a module's bytecode.

Compiling report.md.j2 and report.html.j2 (jinja2 lexes and parses each, generates Python
and compiles it) took a warm `retrieval-eval run` about 0.15 CPU-second; loading code
compiled before takes a millisecond. The code is kept in ``templates/__pycache__`` inside
the installed package, where Python writes the package's own bytecode: whoever can write
there can change the package's modules, so the code there is trusted as much as they are.
Never in the run's cache folder, which the repository under evaluation (and so a pull
request) can fill. A folder that cannot be written is left alone, and the templates are
compiled in every run as they were before.

An entry is used only for the same template source (jinja2 checks its sha1), the same
jinja2 and Python versions, and an environment that compiles the same way
(``_identity``: the lexer's settings, autoescaping, ``finalize``, the sandbox, the filters
and tests by name and by what they are passed). jinja2 computes a filter whose arguments
are constants while compiling and writes its result into the code; our own filters are
handed the template context, which jinja2 never does while compiling, so none of them is
computed then, and a changed filter takes effect without a changed template.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import jinja2
from jinja2 import Environment, pass_context
from jinja2.bccache import Bucket, BytecodeCache
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.runtime import Context
from jinja2.tests import TESTS as DEFAULT_TESTS
from jinja2.utils import _PassArg

from retrieval_eval.fileio import atomic_write_bytes

CODE_FOLDER = Path(__file__).parent / "templates" / "__pycache__"
SUFFIX = ".jinja"

EnvironmentType = TypeVar("EnvironmentType", bound=Environment)


class TemplateCode(BytecodeCache):
    """jinja2's bytecode cache for one environment's templates, in ``folder``."""

    def __init__(self, environment: Environment, folder: Path = CODE_FOLDER) -> None:
        self.environment = environment
        self.folder = folder

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return hashlib.sha256(_identity(self.environment, name).encode("utf-8")).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            data = (self.folder / f"{bucket.key}{SUFFIX}").read_bytes()
        except OSError:
            return
        bucket.bytecode_from_string(data)  # a stale or damaged entry leaves the bucket empty

    def dump_bytecode(self, bucket: Bucket) -> None:
        # An installed package's folder may be read-only: then every run compiles.
        with contextlib.suppress(OSError):
            atomic_write_bytes(self.folder / f"{bucket.key}{SUFFIX}", bucket.bytecode_to_string())


def keep_compiled(environment: EnvironmentType, folder: Path = CODE_FOLDER) -> EnvironmentType:
    """``environment`` with its templates' compiled code kept in ``folder`` between runs;
    call it once every filter is in place."""
    for name, function in list(environment.filters.items()):
        if function is not DEFAULT_FILTERS.get(name):
            environment.filters[name] = _at_render_time(function)
    environment.bytecode_cache = TemplateCode(environment, folder)
    return environment


def _at_render_time(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as a filter that jinja2 calls only while rendering."""
    if _PassArg.from_obj(function) is not None:
        raise ValueError(f"filter {function!r}: pass-through filters only")

    @pass_context
    def call(context: Context, *args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    return call


def _identity(environment: Environment, name: str) -> str:
    """What the code compiled for template ``name`` depends on, besides its source."""
    autoescape = environment.autoescape
    finalize = environment.finalize
    return repr(
        (
            jinja2.__version__,
            name,
            f"{type(environment).__module__}.{type(environment).__qualname__}",
            environment.block_start_string,
            environment.block_end_string,
            environment.variable_start_string,
            environment.variable_end_string,
            environment.comment_start_string,
            environment.comment_end_string,
            environment.line_statement_prefix,
            environment.line_comment_prefix,
            environment.trim_blocks,
            environment.lstrip_blocks,
            environment.newline_sequence,
            environment.keep_trailing_newline,
            autoescape(name) if callable(autoescape) else autoescape,
            None if finalize is None else _named(finalize),
            environment.optimized,
            environment.is_async,
            sorted(environment.extensions),
            _kinds(environment.filters, DEFAULT_FILTERS),
            _kinds(environment.tests, DEFAULT_TESTS),
        )
    )


def _kinds(functions: Mapping[str, Any], defaults: Mapping[str, Any]) -> list[str]:
    """Each function by name, jinja2's own or not, and what jinja2 passes it."""
    return [
        f"{name}:{'jinja2' if function is defaults.get(name) else 'own'}:"
        f"{_PassArg.from_obj(function)}"
        for name, function in sorted(functions.items())
    ]


def _named(function: Callable[..., Any]) -> str:
    return f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', '')}"
