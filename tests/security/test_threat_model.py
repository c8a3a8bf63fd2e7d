"""Threat: a security test nobody can find. Every module here belongs to one attack class of
the threat model (``tests/security/__init__.py``) and opens with its attack in a sentence."""

from __future__ import annotations

import ast
from pathlib import Path

import tests.security

HERE = Path(__file__).parent
CLASSES = (
    "boundary",
    "comment",
    "edge",
    "files",
    "fork_publish",
    "gate",
    "input_limits",
    "processes",
    "secrets",
)


def test_every_module_names_its_attack_class_and_opens_with_its_attack() -> None:
    listed = tests.security.__doc__ or ""
    for name in CLASSES:
        assert f"``{name}``" in listed, name
    for module in sorted(HERE.glob("test_*.py")):
        stem = module.stem.removeprefix("test_")
        assert stem == "threat_model" or stem.startswith(tuple(f"{c}_" for c in CLASSES)), (
            f"{module.name}: name it test_<class>_<topic>.py, class one of {CLASSES}"
        )
        doc = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
        assert doc and "." in doc.split("\n\n")[0], f"{module.name}: open with the attack"
