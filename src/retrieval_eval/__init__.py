"""retrieval-eval: gate pull requests on retrieval quality.

The package is laid out as the pipeline it runs:
load → validate → index → retrieval → score → compare → render → publish.
Everything up to ``render`` is free of GitHub concerns; ``publish`` is the thin
edge that talks to a runner and the GitHub API.
"""

__version__ = "0.1.0"
