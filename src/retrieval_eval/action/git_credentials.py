"""Whether ``actions/checkout`` left the job's token where the retriever can read it.

Unless told ``persist-credentials: false``, actions/checkout keeps its token for
later git commands: up to v5 as an ``http.<url>.extraheader`` in ``.git/config``,
from v6 in a ``git-credentials-*.config`` file under the runner's temp folder that
``.git/config`` includes. The retriever (code from the pull request) runs in the
workspace and can read either file, so taking the token out of its environment
does not keep it from the token then. A later step of the job may need those
credentials (to push a commit), so they are not removed; the Action warns instead.
"""

from __future__ import annotations

import re
from pathlib import Path

_EXTRAHEADER = re.compile(r"^\s*extraheader\s*=\s*[\"']?authorization\s*:", re.IGNORECASE | re.M)
_CREDENTIALS_FILE = re.compile(
    r"^\s*path\s*=\s*\S*git-credentials-\S*\.config", re.IGNORECASE | re.M
)

ADVICE = (
    "actions/checkout left the job's token in the repository's git configuration, where the "
    "retriever, which is code from this pull request, can read it. Add `persist-credentials: "
    "false` under `with:` of the checkout step (retrieval-eval does not need git credentials)."
)


def token_persisted(workspace: Path) -> bool:
    """True when ``workspace/.git/config`` holds, or includes, checkout's credentials."""
    try:
        text = (workspace / ".git" / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:  # no git folder (a copied workspace), or not readable: nothing to say
        return False
    return bool(_EXTRAHEADER.search(text) or _CREDENTIALS_FILE.search(text))
