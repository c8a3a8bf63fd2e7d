"""retrieval-eval: gate pull requests on retrieval quality.

The package is laid out as the evaluation it runs: the stages load → validate → index →
retrieval → score → compare → render, then ``pipeline`` (one evaluation), ``prepare`` (how
every edge makes the settings) and ``usecases`` (one module per thing a user does).
Everything up to ``usecases`` is free of GitHub concerns; ``action`` (the GitHub Action:
runner files, the GitHub API, comment and status) and ``commands`` (the command line) are
the edges that call it. tests/test_layout.py holds the order; docs/architecture.md draws it.
"""

from importlib import metadata

# pyproject.toml is the one place the version is written; the installed distribution's
# metadata carries it here, so a release bump edits one line.
__version__ = metadata.version("retrieval-eval")
