"""No module receives a bare tolerance: the gate's knobs travel as one ``GatePolicy``.

The walk reads every function in ``src/`` and finds each parameter named like a tolerance
(``tolerance``, ``tolerances``, ``metric_tolerance``...) whose annotation is a float, or holds
floats (``dict[str, float]``). Only these may take one: the option table (``config/``) and
the settings model that declare and check the value, ``compare/policy.py`` that builds the
policy from them, and the private arithmetic of ``compare/rules.py``, which takes one
metric's tolerance from the policy it was handed (``GatePolicy.tolerance_for``) and scales
the rule's bounds by it inside that module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "retrieval_eval"
TOLERANCE_NAME = re.compile(r"toleran")
# Where a bare tolerance may be a parameter (paths inside the package).
DECLARED_IN = ("config/", "settings.py", "compare/policy.py")
# Private helpers that do a rule's arithmetic on the value the policy resolved, in the module
# that was handed the policy: (module, function).
ARITHMETIC = {("compare/rules.py", "_gain")}


def bare_tolerances(source: str) -> list[tuple[int, str, str]]:
    """(line, function, parameter) for each parameter named like a tolerance and annotated
    with a float (or a collection of floats)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        for argument in every:
            if not TOLERANCE_NAME.search(argument.arg) or argument.annotation is None:
                continue
            if re.search(r"\bfloat\b", ast.unparse(argument.annotation)):
                found.append((node.lineno, node.name, argument.arg))
    return found


def offenders() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith(DECLARED_IN):
            continue
        for line, function, parameter in bare_tolerances(path.read_text(encoding="utf-8")):
            if (module, function) not in ARITHMETIC:
                found.append(f"{module}:{line}: {function}({parameter}: float)")
    return found


def test_no_module_receives_a_bare_tolerance() -> None:
    """Pass the ``GatePolicy`` (``policy.tolerance_for(metric)`` where the number is
    needed) instead of a float a caller picked from the settings."""
    assert offenders() == []


def test_the_arithmetic_allowed_is_still_there() -> None:
    """The allowance names a function that exists and takes one, so it cannot outlive it."""
    for module, function in ARITHMETIC:
        source = (PACKAGE / module).read_text(encoding="utf-8")
        assert function in {name for _, name, _ in bare_tolerances(source)}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(tolerance: float) -> None: ...", [(1, "f", "tolerance")]),
        ("def f(*, metric_tolerance: float | None = None): ...", [(1, "f", "metric_tolerance")]),
        ("async def f(tolerances: dict[str, float]): ...", [(1, "f", "tolerances")]),
        ("class A:\n    def m(self, tolerance: 'float'): ...", [(2, "m", "tolerance")]),
        ("def f(policy: GatePolicy, metric: str) -> float: ...", []),
        ("def f(tolerance: GatePolicy): ...", []),
        ("def f(drop: float, bound: float): ...", []),
    ],
)
def test_the_walk_itself(source: str, expected: list[tuple[int, str, str]]) -> None:
    assert bare_tolerances(source) == expected
