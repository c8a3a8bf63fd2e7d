from __future__ import annotations

import pytest

from retrieval_eval.vocabulary import fit_status_description, state_for


@pytest.mark.parametrize(
    ("verdict", "state"),
    [
        ("passed", "success"),
        ("baseline-established", "success"),
        ("skipped", "success"),
        ("accepted", "success"),
        ("regression", "failure"),
        ("threshold", "failure"),
        ("invalid", "failure"),
        ("error", "error"),
        ("something new", "error"),
    ],
)
def test_state_of_each_verdict(verdict: str, state: str) -> None:
    assert state_for(verdict) == state


def test_description_is_one_line_of_at_most_140_characters() -> None:
    text = "regression: ndcg@10 0.812 → 0.700 (−13.8%)\non keyword.jsonl " + "x" * 200
    fitted = fit_status_description(text)
    assert len(fitted) == 140
    assert "\n" not in fitted and fitted.endswith("…")
    assert fit_status_description("passed: ndcg@10 0.81") == "passed: ndcg@10 0.81"


def test_one_record_per_verdict_gives_every_renderer_its_words() -> None:
    from retrieval_eval.vocabulary import (
        ACTION_VERDICTS,
        EXIT_CODE,
        VERDICT_WORDS,
        ExitCode,
        verdict_words,
    )

    assert set(VERDICT_WORDS) == set(ACTION_VERDICTS)
    # An accepted regression is a success: it must not block merging.
    accepted = verdict_words("accepted")
    assert (accepted.exit_code, accepted.state) == (ExitCode.OK, "success")
    assert "accepted" not in EXIT_CODE  # the Action's verdict, as `skipped`: never a run's
    assert verdict_words("a verdict from a newer version") == VERDICT_WORDS["error"]
