"""retrieval-eval: gate pull requests on retrieval quality.

The package is laid out as the pipeline it runs:
load → validate → index → retrieval → score → trec → compare → render.
Everything up to ``render`` is free of GitHub concerns; ``action`` (the GitHub
Action: runner files, the GitHub API, comment and status) and ``commands`` (the
command line) are the edges that call it. docs/architecture.md draws the layout.
"""

from importlib import metadata

# pyproject.toml is the one place the version is written; the installed distribution's
# metadata carries it here, so a release bump edits one line.
__version__ = metadata.version("retrieval-eval")
