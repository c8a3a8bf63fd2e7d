"""Which shard of N a piece of work belongs to: ``I/N`` on the command line.

A key (a chunk's text fingerprint, a query id) goes to shard
``sha256(key) mod N``: the choice depends on the key alone, so a shard keeps its
work when other documents or queries are added, and every job of a matrix picks
its slice without talking to the others.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from retrieval_eval.errors import ConfigError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")
MAX_SHARDS = 1024


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based, as matrix jobs are numbered in docs) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds_digest(self, digest: bytes) -> bool:
        """True when the sha256 ``digest`` of a key falls in this shard."""
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def holds(self, key: str) -> bool:
        return self.holds_digest(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest())


def parse_shard(text: str) -> Shard:
    """``"2/4"`` → Shard(2, 4); anything else is a ConfigError saying what is expected."""
    match = _SPEC.fullmatch(text)
    if match is None:
        raise ConfigError(f"--shard {text!r}: expected I/N, e.g. 1/4 (shard 1 of 4)")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ConfigError(f"--shard {text!r}: N must be between 1 and {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise ConfigError(f"--shard {text!r}: I must be between 1 and N ({count})")
    return Shard(index, count)
