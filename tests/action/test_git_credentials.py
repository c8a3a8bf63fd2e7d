"""Which git configurations left by actions/checkout hold a credential the retriever could
read: its token (v4's extraheader, v6's included credentials file) or an SSH key (``ssh -i``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.action.git_credentials import ssh_key_persisted, token_persisted


def _workspace(tmp_path: Path, config: str) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / ".git" / "config").write_text(config, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("config", "token", "ssh"),
    [
        ("[core]\n\tbare = false\n", False, False),
        ('[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eA==\n', True, False),
        ('[includeIf "gitdir:/w/.git"]\n\tpath = /t/git-credentials-1a.config\n', True, False),
        ('[core]\n\tsshCommand = "ssh" -i "/t/5b1f" -o StrictHostKeyChecking=yes\n', False, True),
        ("[core]\n\tsshcommand = ssh -i/t/key\n", False, True),
        ("[core]\n\tsshCommand = ssh -o StrictHostKeyChecking=yes\n", False, False),
    ],
)
def test_what_checkout_left(tmp_path: Path, config: str, token: bool, ssh: bool) -> None:
    workspace = _workspace(tmp_path, config)
    assert (token_persisted(workspace), ssh_key_persisted(workspace)) == (token, ssh)


def test_no_git_folder_is_nothing_to_say(tmp_path: Path) -> None:
    assert not token_persisted(tmp_path) and not ssh_key_persisted(tmp_path)


@given(st.text(max_size=200).filter(lambda text: "sshcommand" not in text.lower()))
def test_a_configuration_naming_no_ssh_command_holds_no_key(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        assert not ssh_key_persisted(_workspace(Path(folder), text))


@given(
    key=st.text(st.characters(blacklist_categories=("Z", "C")), min_size=1, max_size=40),
    options=st.sampled_from(["", " -o StrictHostKeyChecking=yes", ' -o "UserKnownHostsFile=x"']),
)
def test_any_key_file_checkout_names_is_found(key: str, options: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        config = f'[core]\n\tsshCommand = "ssh" -i "{key}"{options}\n'
        assert ssh_key_persisted(_workspace(Path(folder), config))
