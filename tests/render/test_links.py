"""Where a report links on GitHub: the workflow run, its artifacts and each fixture's line,
each part quoted so a branch-made run id, a commit or a dataset name cannot add a path,
a query or a fragment of its own."""

from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.render.links import ReportLinks


def links(
    datasets_path: str = "datasets", sha: str = "0123abcd", run_id: str = "42"
) -> ReportLinks:
    return ReportLinks.for_commit(
        server_url="https://github.example.com/",
        repository="team/notes",
        sha=sha,
        run_id=run_id,
        datasets_path=datasets_path,
    )


def test_the_run_its_artifacts_and_a_fixture_s_line() -> None:
    made = links("/golden/sets/")
    assert made.run_url == "https://github.example.com/team/notes/actions/runs/42"
    assert made.artifacts_url == made.run_url + "#artifacts"
    assert made.fixture_url("hybrid.jsonl", 12) == (
        "https://github.example.com/team/notes/blob/0123abcd/golden/sets/hybrid.jsonl#L12"
    )
    assert links("").fixture_url("x.jsonl", 1).endswith("/blob/0123abcd/x.jsonl#L1")


@given(st.text(min_size=1, max_size=12), st.text(min_size=1, max_size=12), st.integers(1, 10**6))
def test_no_value_can_step_out_of_its_place_in_the_url(
    hostile: str, dataset: str, line: int
) -> None:
    made = links(sha=hostile, run_id=hostile)
    # /team/notes/actions/runs/ID and /team/notes/blob/SHA: one step each, whatever it holds.
    for url, steps in ((made.run_url, 5), (made.blob_url, 4)):
        parts = urlsplit(url)
        assert (parts.query, parts.fragment) == ("", "")
        assert parts.path.count("/") == steps
    fixture = urlsplit(made.fixture_url(dataset, line))
    assert fixture.query == ""
    assert fixture.fragment == f"L{line}"
