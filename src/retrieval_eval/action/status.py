"""The commit status: the check a branch protection rule can require."""

from __future__ import annotations

from retrieval_eval.vocabulary import fit_status_description


def skipped_description(paths: str) -> str:
    return fit_status_description(f"skipped: no changes under {paths}")
