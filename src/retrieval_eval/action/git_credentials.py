"""Whether ``actions/checkout`` left the job's token where the retriever can read it.

Unless told ``persist-credentials: false``, actions/checkout keeps its token for
later git commands: up to v5 as an ``http.<url>.extraheader`` in ``.git/config``,
from v6 in a ``git-credentials-*.config`` file under the runner's temp folder that
``.git/config`` includes. The retriever (code from the pull request) runs in the
workspace and can read either file, so taking the token out of its environment
does not keep it from the token then. With ``ssh-key:`` checkout keeps a deploy key
instead: the key in a file under the runner's temp folder, named by ``core.sshCommand``
(``ssh -i KEY``) in ``.git/config``. A step running the pull request's code as the
runner's user can read that file (in the Action's container the boundary closes the
runner's temp folder to it, but the key still outlives the checkout). A later step of the
job may need those credentials (to push a commit), so they are not removed; the Action
warns instead.
"""

from __future__ import annotations

import re
from pathlib import Path

_EXTRAHEADER = re.compile(r"^\s*extraheader\s*=\s*[\"']?authorization\s*:", re.IGNORECASE | re.M)
_CREDENTIALS_FILE = re.compile(
    r"^\s*path\s*=\s*\S*git-credentials-\S*\.config", re.IGNORECASE | re.M
)

_SSH_KEY = re.compile(r"^\s*sshcommand\s*=.*\s-i\s*\S", re.IGNORECASE | re.M)

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


SSH_ADVICE = (
    "actions/checkout left an SSH key configured for git (`core.sshCommand` with `-i` in the "
    "repository's git configuration): a key file any step running as the runner's user can "
    "read, this pull request's code included when it runs outside the Action's container. "
    "Add `persist-credentials: false` under `with:` of the checkout step (retrieval-eval "
    "does not need git credentials)."
)


def ssh_key_persisted(workspace: Path) -> bool:
    """True when ``workspace/.git/config`` tells ssh to use a key file (``ssh -i``)."""
    try:
        text = (workspace / ".git" / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return bool(_SSH_KEY.search(text))
