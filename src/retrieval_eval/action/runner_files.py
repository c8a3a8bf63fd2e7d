"""The runner's side channels: step outputs, the job summary, and workflow commands.

A container action talks back to the runner only through files named in the
environment (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``) and through specially
formatted lines on stdout (``::error::``, ``::group::``). Getting the escaping
wrong silently truncates values or breaks annotations, so it lives here once,
and everything the Action hands back goes through one ``RunnerFiles`` object.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from retrieval_eval.trust.log_escape import Relay, defuse_lines
from retrieval_eval.trust.redaction import clean, raw_stdout
from retrieval_eval.vocabulary import state_for


def _escape_data(value: str) -> str:
    # The runner decodes exactly these three; anything else in a message is literal.
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


class RunnerFiles:
    """The one owner of what the Action hands back to the runner: ``::command::`` lines on
    ``stream`` (stdout by default), step outputs and the job summary."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        output_file: Path | None = None,
        summary_file: Path | None = None,
    ) -> None:
        self._stream = stream
        self._output_file = output_file
        self._summary_file = summary_file
        self._outputs_set: set[str] = set()
        self._ending: tuple[str | None, str] | None = None  # (verdict, one line) once recorded

    @classmethod
    def from_env(cls, env: Mapping[str, str], stream: TextIO | None = None) -> RunnerFiles:
        output, summary = env.get("GITHUB_OUTPUT", "").strip(), env.get("GITHUB_STEP_SUMMARY", "")
        return cls(
            stream,
            output_file=Path(output) if output else None,
            summary_file=Path(summary.strip()) if summary.strip() else None,
        )

    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        _write_outputs(self._output_file, outputs)
        self._outputs_set.update(outputs)

    def default_outputs(self, outputs: Mapping[str, str]) -> None:
        """Set the outputs that nothing has set yet (values set earlier stay)."""
        unset = {name: value for name, value in outputs.items() if name not in self._outputs_set}
        if unset:
            self.set_outputs(unset)

    def append_summary(self, markdown: str) -> None:
        _append_step_summary(self._summary_file, markdown)

    def record(
        self,
        verdict: str | None,
        line: str,
        *,
        summary: str,
        outputs: Mapping[str, str] | None = None,
    ) -> None:
        """The run's result, handed back before anything is posted: the job summary, the
        ``verdict`` output (None: a shard job, which has none) and the other outputs. ``line``
        is what ``finish`` writes last."""
        self.append_summary(summary)
        values = dict(outputs or {})
        if verdict is not None:
            values["verdict"] = verdict
        if values:
            self.set_outputs(values)
        self._ending = (verdict, line)

    def finish(self, exit_code: int) -> None:
        """The log's last line says the verdict: ``::error`` when the step fails, ``::warning``
        when it passes on a failing verdict (``fail-on-regression: false``), else ``::notice``."""
        verdict, line = self._ending or ("error", "retrieval-eval ended without a verdict")
        text = (
            f"{verdict}: {line}"
            if verdict is not None and not line.lower().startswith(verdict)
            else line
        )
        if exit_code != 0:
            self.error(text, title="retrieval-eval")
        elif verdict is not None and state_for(verdict) != "success":
            self.warning(text, title="retrieval-eval")
        else:
            self._command("notice", text, {"title": "retrieval-eval"})

    def _emit(self, line: str) -> None:
        # The real stdout: the guarded one defuses every command, ours included.
        stream = self._stream if self._stream is not None else raw_stdout()
        stream.write(line + "\n")
        stream.flush()

    def _command(self, name: str, message: str, properties: Mapping[str, object]) -> None:
        # Secrets are masked in the raw text, before escaping changes how they are spelt.
        message = clean(message)
        props = ",".join(
            f"{key}={_escape_property(clean(str(value)))}"
            for key, value in properties.items()
            if value is not None
        )
        self._emit(f"::{name}{' ' + props if props else ''}::{_escape_data(message)}")

    def error(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        title: str | None = None,
    ) -> None:
        self._command("error", message, {"file": file, "line": line, "title": title})

    def warning(self, message: str, *, title: str | None = None) -> None:
        self._command("warning", message, {"title": title})

    def notice(self, message: str) -> None:
        self._command("notice", message, {})

    def info(self, message: str) -> None:
        """Plain log text: no line of it can be a workflow command."""
        self._emit(defuse_lines(clean(message)))

    def relay(self, title: str, text: str) -> None:
        """Text passed on as it was written (what a retriever said), folded under ``title``,
        with the runner's command processing stopped around it."""
        relay = Relay()
        with self.group(title):
            self._emit(relay.wrap(clean(text)))

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        """Fold a long phase in the log; the group is closed even when the phase raises."""
        self._emit(f"::group::{_escape_data(clean(title))}")
        try:
            yield
        finally:
            self._emit("::endgroup::")


def _write_outputs(output_file: Path | None, outputs: Mapping[str, str]) -> None:
    """Append ``name<<DELIM`` blocks, with a random delimiter that cannot occur in any value.

    A fixed delimiter lets a value (e.g. a report line) end the block early and
    inject further outputs, which is why the runner documents the random one.
    """
    if output_file is None:
        return
    blocks = []
    for name, raw_value in outputs.items():
        value = clean(raw_value)
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        while delimiter in value:  # astronomically unlikely, but then the output would be cut
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        blocks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with output_file.open("a", encoding="utf-8") as handle:
        handle.write("".join(blocks))


def _append_step_summary(summary_file: Path | None, markdown: str) -> None:
    """The job summary accepts up to 1 MiB per step; our reports stay far below it."""
    if summary_file is None:
        return
    text = clean(markdown)
    with summary_file.open("a", encoding="utf-8") as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
