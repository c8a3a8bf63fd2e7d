"""The commit status a skipped run sets: it names the paths that would have run it."""

from __future__ import annotations

from retrieval_eval.action.status import skipped_description


def test_skipped_description_names_the_paths() -> None:
    assert skipped_description("datasets/**, !docs/**") == (
        "skipped: no changes under datasets/**, !docs/**"
    )


def test_a_long_path_list_still_fits_a_commit_status() -> None:
    description = skipped_description(", ".join(f"datasets/team-{n}/**" for n in range(40)))
    assert len(description) <= 140
    assert description.startswith("skipped: no changes under datasets/team-0/**")
