"""Fork pull requests: an unprivileged run leaves its results in files, a privileged run posts them.

A fork's ``pull_request`` run gets a read-only token, so it cannot comment or
set a status. It writes the rendered comment and a small metadata file into
``report-dir`` (uploaded as an artifact); a ``workflow_run`` job with write
permission runs ``mode: publish``, which reads them back. Those files come from
code the fork controls, so everything read here is validated, and what decides
*where* things are posted (status context, the commit) never comes from them.
"""

from __future__ import annotations

import errno
import html
import json
import os
import re
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from retrieval_eval.action.comment import room_for_report
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.vocabulary import STATUS_DESCRIPTION_LIMIT, ActionVerdict

COMMENT_FILE = "fork-comment.md"
METADATA_FILE = "fork-publish.json"
FORK_SCHEMA_VERSION: Literal[1] = 1

# After "é" or "日" an "@name" still notifies: GitHub's word characters are ASCII only. A
# backtick does not protect it (an unpaired one opens no code span), nor does "_" (in
# `_@name_` it opens emphasis, and "@name" starts the emphasised text).
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?!\u2060)")
# A character reference (`&#64;`, `&#x40;`, `&commat;`) becomes "@" before GitHub looks for
# mentions, so each is decoded before the check; the semicolon is optional as in HTML.
_CHARACTER_REFERENCE = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?")
# fork-publish.json is a few hundred bytes; a comment's characters take at most 4 bytes each.
METADATA_MAX_BYTES = 64 * 1024
_UTF8_MAX_BYTES_PER_CHAR = 4


class ForkMetadata(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = FORK_SCHEMA_VERSION
    pr_number: int = Field(gt=0)
    head_sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    verdict: ActionVerdict
    status_description: str = Field(max_length=STATUS_DESCRIPTION_LIMIT, pattern=r"^[^\x00-\x1f]*$")
    comment_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")
    has_comment: bool

    @field_validator("verdict")
    @classmethod
    def _not_accepted(cls, verdict: str) -> str:
        """A fork's run has a read-only token and never checks an accepting label, so it
        never hands over `accepted`: one that says so claims a maintainer's decision."""
        if verdict == "accepted":
            raise ValueError("a fork's run cannot accept a regression")
        return verdict


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
    """None when the evaluating run left nothing (it failed early, or the artifact is absent).

    Both files are read only if they are regular files (not a symlink, a FIFO or a device),
    and never past their size limit: the size is checked before a byte is read."""
    metadata_path = report_dir / METADATA_FILE
    if not os.path.lexists(metadata_path):
        return None
    raw = _read_untrusted(metadata_path, METADATA_MAX_BYTES)
    try:
        metadata = ForkMetadata.model_validate(json.loads(raw.decode("utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"not valid JSON ({error})", file=metadata_path) from None
    except RecursionError:
        raise InputError("not valid JSON (nested too deeply)", file=metadata_path) from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(file)"
        raise InputError(f"field {where!r}: {first['msg']}", file=metadata_path) from None
    comment: str | None = None
    # The fork wrote the text: its mentions must not notify, and its HTML comments are shown
    # as text, since one carrying an evaluation's marker would pass for that one's comment.
    if metadata.has_comment:
        comment_path = report_dir / COMMENT_FILE
        room = room_for_report(metadata.comment_id)
        data = _read_untrusted(comment_path, room * _UTF8_MAX_BYTES_PER_CHAR)
        try:
            comment = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", file=comment_path) from None
        if len(comment) > room:
            raise InputError("longer than a GitHub comment may be", file=comment_path)
        comment = neutralize_mentions(comment).replace("<!--", "&lt;!--")
    return ForkResults(metadata=metadata, comment_markdown=comment)


def _read_untrusted(path: Path, max_bytes: int) -> bytes:
    """The bytes of a file the fork wrote; InputError unless it is a regular file of at most
    ``max_bytes``. Reads at most ``max_bytes + 1`` bytes, whatever the file claims."""
    try:
        # O_NOFOLLOW: a symlink is refused, not followed; O_NONBLOCK: a FIFO does not block.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise InputError("is a symlink; refusing to follow it", file=path) from None
        if error.errno == errno.ENOENT:
            raise InputError("missing", file=path) from None
        raise InputError(f"cannot read: {error.strerror or error}", file=path) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError("is not a regular file; refusing to read it", file=path)
        too_long = f"longer than {max_bytes:,} bytes, more than it may be"
        if info.st_size > max_bytes:
            raise InputError(too_long, file=path)
        os.set_blocking(fd, True)
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew after the check
        raise InputError(too_long, file=path)
    return data


def neutralize_mentions(markdown: str) -> str:
    """A word joiner after every ``@`` that could start a mention stops notifications from
    text a fork wrote, character references to ``@`` included.

    Our renderer already escapes mentions; this pass is for a crafted file.
    """
    decoded = _CHARACTER_REFERENCE.sub(_decode_at_sign, markdown)
    return _MENTION.sub("@\u2060", decoded)


def _decode_at_sign(match: re.Match[str]) -> str:
    reference = match.group(0)
    return "@" if html.unescape(reference) == "@" else reference
