from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.action.event import (
    CommitActivity,
    PublishActivity,
    PullRequestActivity,
    decide_activity,
    read_event,
)
from retrieval_eval.errors import ConfigError
from tests.action.payloads import pull_request_event, push_event, workflow_run_event

HEAD, BASE, MERGE = "a" * 40, "b" * 40, "c" * 40


def test_pull_request_status_goes_on_the_head_not_the_merge_commit() -> None:
    payload = pull_request_event(number=7, head_sha=HEAD, base_sha=BASE, action="synchronize")
    activity = decide_activity(
        mode="evaluate", event_name="pull_request", payload=payload, sha=MERGE
    )
    assert activity == PullRequestActivity(
        number=7,
        head_sha=HEAD,
        base_sha=BASE,
        head_repository="octo/notes",
        base_repository="octo/notes",
        changed_files_count=2,
    )
    assert not activity.is_fork


def test_a_fork_pull_request_run_has_a_read_only_token() -> None:
    payload = pull_request_event(number=8, head_sha=HEAD, base_sha=BASE, head_repo="mallory/notes")
    activity = decide_activity(
        mode="evaluate", event_name="pull_request", payload=payload, sha=MERGE
    )
    assert isinstance(activity, PullRequestActivity)
    assert activity.is_fork and activity.token_is_read_only


def test_pull_request_target_runs_with_the_base_token_and_publishes_directly() -> None:
    payload = pull_request_event(number=8, head_sha=HEAD, base_sha=BASE, head_repo="mallory/notes")
    activity = decide_activity(
        mode="evaluate", event_name="pull_request_target", payload=payload, sha=MERGE
    )
    assert isinstance(activity, PullRequestActivity)
    assert activity.is_fork and not activity.token_is_read_only


def test_a_deleted_fork_is_still_a_fork() -> None:
    payload = pull_request_event(number=8, head_sha=HEAD, base_sha=BASE)
    payload["pull_request"]["head"]["repo"] = None
    activity = decide_activity(
        mode="evaluate", event_name="pull_request", payload=payload, sha=MERGE
    )
    assert isinstance(activity, PullRequestActivity) and activity.is_fork


@pytest.mark.parametrize("event_name", ["push", "workflow_dispatch"])
def test_push_and_manual_runs_evaluate_the_commit(event_name: str) -> None:
    activity = decide_activity(
        mode="evaluate", event_name=event_name, payload=push_event(HEAD), sha=HEAD
    )
    # Only a push to the default branch is recorded in the history.
    pushed = event_name == "push"
    assert activity == CommitActivity(sha=HEAD, event_name=event_name, default_branch_push=pushed)


def test_a_push_to_another_branch_is_not_recorded_in_the_history() -> None:
    payload = push_event(HEAD, branch="feature")
    activity = decide_activity(mode="evaluate", event_name="push", payload=payload, sha=HEAD)
    assert activity == CommitActivity(sha=HEAD, event_name="push", default_branch_push=False)


def test_publish_mode_remembers_the_commit_the_triggering_run_evaluated() -> None:
    payload = workflow_run_event(head_sha=HEAD)
    activity = decide_activity(
        mode="publish", event_name="workflow_run", payload=payload, sha=MERGE
    )
    assert activity == PublishActivity(triggering_head_sha=HEAD)


def test_workflow_run_without_publish_mode_says_which_input_to_set() -> None:
    with pytest.raises(ConfigError, match="set input `mode: publish`"):
        decide_activity(
            mode="evaluate", event_name="workflow_run", payload=workflow_run_event(HEAD), sha=MERGE
        )


def test_unsupported_event_lists_the_supported_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        decide_activity(mode="evaluate", event_name="issues", payload={}, sha=MERGE)
    assert str(caught.value) == (
        "event 'issues' is not supported; supported events: merge_group, pull_request, "
        "pull_request_target, push, schedule, workflow_dispatch"
    )


def test_a_truncated_pull_request_payload_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"lacks number, head\.sha, base\.sha"):
        decide_activity(
            mode="evaluate", event_name="pull_request", payload={"pull_request": {}}, sha=MERGE
        )


def test_unreadable_payload_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text('{\n  "action": \n}')
    with pytest.raises(ConfigError) as caught:
        read_event(path)
    assert str(caught.value) == f"{path}:3: the event payload is not JSON: Expecting value"


def test_a_labeled_run_knows_the_label_its_event_added() -> None:
    payload = pull_request_event(
        number=7, head_sha=HEAD, base_sha=BASE, action="labeled", labels=("a", "b")
    )
    activity = decide_activity(
        mode="evaluate", event_name="pull_request", payload=payload, sha=MERGE
    )
    assert isinstance(activity, PullRequestActivity)
    assert activity.labeled == "b"
    assert activity.labels == ("a", "b")


@pytest.mark.parametrize("action", ["opened", "synchronize", "unlabeled"])
def test_only_a_labeled_event_names_an_added_label(action: str) -> None:
    """Another event's payload may carry a label (``unlabeled`` names the one removed)."""
    payload = pull_request_event(number=7, head_sha=HEAD, base_sha=BASE, action=action)
    payload["label"] = {"name": "retrieval-eval: accept"}
    activity = decide_activity(
        mode="evaluate", event_name="pull_request", payload=payload, sha=MERGE
    )
    assert isinstance(activity, PullRequestActivity)
    assert activity.labeled is None


@settings(deadline=None)
@given(label=st.one_of(st.none(), st.integers(), st.text(), st.dictionaries(st.text(), st.text())))
def test_any_label_field_parses_to_a_name_or_none(label: object) -> None:
    payload = pull_request_event(number=7, head_sha=HEAD, base_sha=BASE, action="labeled")
    payload["label"] = label
    activity = decide_activity(
        mode="evaluate", event_name="pull_request", payload=payload, sha=MERGE
    )
    assert isinstance(activity, PullRequestActivity)
    expected = label.get("name") if isinstance(label, dict) else None
    assert activity.labeled == expected
