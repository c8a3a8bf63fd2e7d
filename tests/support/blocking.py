"""A command retriever that never answers, for the tests of `time_limit_s`.

Its script opens a FIFO for reading that nobody writes to: the open waits for a writer
for ever, so only the time bound can end the run. Afterwards ``left_waiting`` tells
whether the run left that process behind (and lets it go if it did).
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from pathlib import Path

SCRIPT = "never_answers.py"
FIFO = "never.fifo"
_WAITS = "import sys\n\nwith open(sys.argv[1], encoding='utf-8') as fifo:\n    fifo.read()\n"


def never_answering(
    root: Path, *, time_limit_s: float, dataset: str = "keyword.jsonl", folder: Path | None = None
) -> Path:
    """Make the config in ``root`` search ``dataset`` with the retriever that never answers,
    within ``time_limit_s``; its script and FIFO go in ``folder`` (default ``root``; a git
    repository cannot hold a FIFO). Returns the FIFO."""
    folder = folder or root
    fifo = folder / FIFO
    os.mkfifo(fifo)
    script = folder / SCRIPT
    script.write_text(_WAITS, encoding="utf-8")
    config = root / "retrieval-eval.toml"
    text = config.read_text(encoding="utf-8")
    chosen = f'"{dataset}" = "custom"\n'
    if "[dataset_retrievers]\n" in text:
        text = re.sub(rf'^"{re.escape(dataset)}" = .*\n', chosen, text, count=1, flags=re.M)
        assert chosen in text
    else:
        text += f"\n[dataset_retrievers]\n{chosen}"
    command = json.dumps([sys.executable, str(script), str(fifo)])
    config.write_text(
        f"time_limit_s = {time_limit_s:g}\n{text}\n[retrievers.custom]\ncommand = {command}\n",
        encoding="utf-8",
    )
    return fifo


def left_waiting(fifo: Path) -> bool:
    """Whether a process still waits on ``fifo``; if one does, opening and closing its
    writing end lets it read the end of the file and exit."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ENXIO:  # no reader: nobody waits
            return False
        raise
    os.close(fd)
    return True
