"""Read a step's log as GitHub's runner does, and list the workflow commands it obeys.

The runner splits the output into lines at ``\\n`` and ``\\r``; a line whose text, leading
whitespace trimmed, starts with ``::`` and has a second ``::`` is a command (``::name
props::data``), and so is the older ``##[name props]data`` anywhere in a line for the
commands registered for it. After ``::stop-commands::TOKEN`` it obeys nothing until a line
``::TOKEN::``. This follows the runner's ActionCommand parser and command manager.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The commands the runner knows in the ##[...] form (the rest are ignored in that form).
V1_COMMANDS = frozenset(
    {"error", "warning", "notice", "debug", "group", "endgroup", "add-mask", "set-output"}
)


@dataclass(frozen=True)
class Command:
    name: str
    properties: str
    data: str


def obeyed_commands(log: str) -> list[Command]:
    """Every command the runner would act on, in order (the stop and resume included)."""
    commands: list[Command] = []
    resume: str | None = None
    for line in re.split(r"\r\n|\r|\n", log):
        text = line.lstrip()
        if resume is not None:
            if text == resume:
                commands.append(Command("resume", "", ""))
                resume = None
            continue
        command = _v2(text) or _v1(line)
        if command is None:
            continue
        commands.append(command)
        if command.name == "stop-commands":
            resume = f"::{command.data}::"
    return commands


def _v2(text: str) -> Command | None:
    if not text.startswith("::"):
        return None
    end = text.find("::", 2)
    if end < 0:
        return None
    info = text[2:end]
    name, _, properties = info.partition(" ")
    return Command(name, properties, text[end + 2 :]) if name else None


def _v1(line: str) -> Command | None:
    start = line.find("##[")
    if start < 0:
        return None
    close = line.find("]", start)
    if close < 0:
        return None
    name, _, properties = line[start + 3 : close].partition(" ")
    return Command(name, properties, line[close + 1 :]) if name in V1_COMMANDS else None
