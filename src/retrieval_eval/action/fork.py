"""Fork pull requests: an unprivileged run leaves its results in files, a privileged run posts them.

A fork's ``pull_request`` run gets a read-only token, so it cannot comment or
set a status. It writes the rendered comment and a small metadata file into
``report-dir`` (uploaded as an artifact); a ``workflow_run`` job with write
permission runs ``mode: publish``, which reads them back. Those files come from
code the fork controls, so everything read here is validated, and what decides
*where* things are posted (status context, the commit) never comes from them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrieval_eval.action.comment import room_for_report
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.vocabulary import STATUS_DESCRIPTION_LIMIT, ActionVerdict

COMMENT_FILE = "fork-comment.md"
METADATA_FILE = "fork-publish.json"
FORK_SCHEMA_VERSION: Literal[1] = 1

# After "é" or "日" an "@name" still notifies: GitHub's word characters are ASCII only.
_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@(?=[A-Za-z0-9])")


class ForkMetadata(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = FORK_SCHEMA_VERSION
    pr_number: int = Field(gt=0)
    head_sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    verdict: ActionVerdict
    status_description: str = Field(max_length=STATUS_DESCRIPTION_LIMIT, pattern=r"^[^\x00-\x1f]*$")
    comment_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
    has_comment: bool


class ForkResults(BaseModel):
    model_config = ConfigDict(frozen=True)

    metadata: ForkMetadata
    comment_markdown: str | None


def write_fork_results(
    report_dir: Path, metadata: ForkMetadata, comment_markdown: str | None
) -> None:
    if comment_markdown is not None:
        atomic_write_text(report_dir / COMMENT_FILE, comment_markdown)
    else:
        (report_dir / COMMENT_FILE).unlink(missing_ok=True)
    atomic_write_text(report_dir / METADATA_FILE, metadata.model_dump_json(indent=2) + "\n")


def read_fork_results(report_dir: Path) -> ForkResults | None:
    """None when the evaluating run left nothing (it failed early, or the artifact is absent)."""
    metadata_path = report_dir / METADATA_FILE
    if not metadata_path.is_file():
        return None
    try:
        metadata = ForkMetadata.model_validate(
            json.loads(metadata_path.read_text(encoding="utf-8"))
        )
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"not valid JSON ({error})", file=metadata_path) from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(file)"
        raise InputError(f"field {where!r}: {first['msg']}", file=metadata_path) from None
    comment: str | None = None
    # The fork wrote the text: its mentions must not notify, and its HTML comments are shown
    # as text, since one carrying an evaluation's marker would pass for that one's comment.
    if metadata.has_comment:
        comment_path = report_dir / COMMENT_FILE
        try:
            comment = comment_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            raise InputError("missing or not UTF-8 text", file=comment_path) from None
        if len(comment) > room_for_report(metadata.comment_id):
            raise InputError("longer than a GitHub comment may be", file=comment_path)
        comment = neutralize_mentions(comment).replace("<!--", "&lt;!--")
    return ForkResults(metadata=metadata, comment_markdown=comment)


def neutralize_mentions(markdown: str) -> str:
    """A zero-width joiner after ``@`` stops notifications from text a fork wrote.

    Our renderer already escapes mentions; this pass is for a crafted file.
    """
    return _MENTION.sub("@\u2060", markdown)
