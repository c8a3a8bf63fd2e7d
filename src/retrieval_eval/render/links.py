"""Where a report may link on GitHub: the workflow run, and each fixture's line.

Only the Action knows these (the server, the repository, the commit the pull request's
code is at, the run); it builds one ``ReportLinks`` from what the runner said and hands
it down. A plain ``retrieval-eval run`` has none, and its report links nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

# The documentation a comment links to (the owner is the one `init`'s ACTION names; a test
# holds the two equal).
DOCS_URL = "https://github.com/org/retrieval-eval/blob/main/docs"
# How a Python factory gets the packages it imports, in the Action's container.
FACTORY_PACKAGES_DOCS = f"{DOCS_URL}/retrievers.md#packages-a-python-factory-needs"

# The artifact the workflows `init` writes upload the report folder as (report.html among
# it); the comment links to the run's artifacts by this name.
REPORT_ARTIFACT = "retrieval-eval-report"


@dataclass(frozen=True)
class ReportLinks:
    run_url: str  # the workflow run: {server}/{owner/repo}/actions/runs/{id}
    blob_url: str  # the evaluated code: {server}/{owner/repo}/blob/{sha}
    datasets_path: str  # the datasets folder, relative to the repository root ("" for the root)

    @classmethod
    def for_commit(
        cls, *, server_url: str, repository: str, sha: str, run_id: str, datasets_path: str
    ) -> ReportLinks:
        server = server_url.rstrip("/")
        return cls(
            run_url=f"{server}/{repository}/actions/runs/{quote(run_id, safe='')}",
            blob_url=f"{server}/{repository}/blob/{quote(sha, safe='')}",
            datasets_path=datasets_path.strip("/"),
        )

    @property
    def artifacts_url(self) -> str:
        """The run's artifacts, where the workflow's upload step put report.html."""
        return f"{self.run_url}#artifacts"

    def fixture_url(self, dataset: str, line: int) -> str:
        """The fixture's line in the dataset file, e.g. ``…/blob/SHA/datasets/x.jsonl#L12``."""
        path = f"{self.datasets_path}/{dataset}" if self.datasets_path else dataset
        return f"{self.blob_url}/{quote(path)}#L{line}"
