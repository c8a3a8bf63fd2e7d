"""Put one evaluation's verdict on GitHub: the status, then the comment (if any).

Pull requests, pushes and ``mode: publish`` all end this way, and all must
treat a GitHub failure alike: the results are already in the job summary and
outputs, so the failure is reported and the run exits 2.
"""

from __future__ import annotations

from retrieval_eval.action.comment import compose_body, mark_skipped, post_comment
from retrieval_eval.action.github_api import GitHubApi, GitHubApiError
from retrieval_eval.action.inputs import ActionSettings
from retrieval_eval.action.runner_files import RunnerFiles
from retrieval_eval.render.escape import escape_markdown, visible
from retrieval_eval.trust.signals import verdict_delivered
from retrieval_eval.vocabulary import ExitCode, fit_status_description, state_for


def deliver(
    api: GitHubApi,
    settings: ActionSettings,
    commands: RunnerFiles,
    *,
    sha: str,
    verdict: str,
    description: str,
    group_title: str,
    pr_number: int | None = None,
    comment_markdown: str | None = None,
) -> ExitCode | None:
    """Post, write the ``comment-url`` output, and return ``ExitCode.ERROR`` if GitHub
    refused (``None`` when everything landed). A comment needs both a PR number and text;
    ``comment-url`` stays empty (``main`` defaults it) when no comment was written.

    The status goes first and on its own: a required check waits on it, so a refused
    comment (a 403 from a token without ``pull-requests: write``, a 500) must not cost it.
    """
    failures: list[str] = []
    login: str | None = None  # who the token posts as, from the status's creator
    with commands.group(group_title):
        try:
            login = api.create_status(
                sha,
                state=state_for(verdict),
                description=visible(fit_status_description(description)),
                context=settings.status_context,
                target_url=settings.runner.run_url,
            )
            commands.info(f"Status {settings.status_context!r} set on {sha[:7]}.")
            # A stop request from here on cannot change what the check says: the run
            # finishes (the comment within the stop's time) and exits with the verdict's code.
            verdict_delivered()
        except GitHubApiError as error:
            failures.append(str(error))
        if pr_number is not None and comment_markdown is not None:
            try:
                posted = post_comment(
                    api,
                    number=pr_number,
                    body=compose_body(settings.comment_id, comment_markdown, evaluated=sha),
                    comment_id=settings.comment_id,
                    mode=settings.comment,
                    login=login,
                )
                commands.set_outputs({"comment-url": posted.url})
                commands.info(f"Comment {posted.action}: {posted.url}")
            except GitHubApiError as error:
                failures.append(str(error))
    for failure in failures:
        commands.error(f"The results are in the job summary, but publishing failed: {failure}")
    return ExitCode.ERROR if failures else None


def mark_comment_skipped(
    api: GitHubApi,
    settings: ActionSettings,
    commands: RunnerFiles,
    *,
    pr_number: int,
    sha: str,
    paths: str,
) -> ExitCode | None:
    """A run ``paths`` skipped says so above the last evaluation's report, which stays.

    Its status is success; without this line that green check would sit under the
    earlier report, red perhaps, that reads as if it were about this commit.
    """

    def banner(evaluated: str | None) -> str:
        last = f"`{evaluated[:7]}`" if evaluated else "an earlier commit"
        return (
            f"⏭️ **Skipped at `{sha[:7]}`**: no changes under {escape_markdown(paths)}; "
            f"the last evaluation below is for {last}."
        )

    try:
        marked = mark_skipped(
            api,
            number=pr_number,
            comment_id=settings.comment_id,
            mode=settings.comment,
            banner=banner,
        )
    except GitHubApiError as error:
        commands.error(f"The skip is in the job summary, but updating the comment failed: {error}")
        return ExitCode.ERROR
    if marked is not None:
        commands.set_outputs({"comment-url": marked.url})
        commands.info(f"Comment marked as skipped at {sha[:7]}: {marked.url}")
    return None
