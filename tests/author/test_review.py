"""`retrieval-eval review` driven through stdin, as a person types."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from retrieval_eval.author.review import parse_expected
from tests.author.cli import retrieval_eval
from tests.support.terminal import on_terminal

QUERIES = {
    "gen-kw-001": ("sourdough starter feeding", "recipes/sourdough-starter"),
    "gen-kw-002": ("Lisbon long weekend", "travel/lisbon-long-weekend"),
    "gen-kw-003": ("attention residue shutdown ritual", "books/deep-work"),
    "gen-kw-004": ("temples trains Japan winter", "travel/kyoto-temples"),
    "gen-kw-005": ("campervan ring road", "travel/iceland-ring-road"),
}


@pytest.fixture
def project(tmp_path: Path, repo_root: Path) -> Path:
    shutil.copytree(repo_root / "datasets" / "corpus", tmp_path / "notes")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "notes"\n')
    (tmp_path / "datasets").mkdir()
    lines = [
        json.dumps(
            {
                "query_id": qid,
                "query": query,
                "retrieval_type": "keyword",
                "expected_top_k_ids": [doc],
                "ground_truth_source": "synthetic",
                "query_type": "keyword",
            }
        )
        for qid, (query, doc) in QUERIES.items()
    ]
    (tmp_path / "datasets" / "keyword.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def _fixtures(project: Path) -> dict[str, dict[str, Any]]:
    text = (project / "datasets" / "keyword.jsonl").read_text()
    return {f["query_id"]: f for f in map(json.loads, text.splitlines())}


def _review(project: Path, keys: str) -> str:
    result = retrieval_eval("review", "datasets/keyword.jsonl", cwd=project, stdin=keys)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_accept_skip_reject_edit_then_resume(project: Path) -> None:
    # accept 1, skip 2, reject 3, on 4 choose hits 2 and 1 as the expected ids then accept,
    # then quit before 5.
    out = _review(project, "a\ns\nr\ne\n2,1\na\nx\n")

    assert "[1/5] gen-kw-001  (keyword)" in out
    assert "Query:    sourdough starter feeding" in out
    assert "Source passage (recipes/sourdough-starter):" in out
    assert "Top 5 (bm25):" in out and "recipes/sourdough-starter  <- expected" in out
    fixtures = _fixtures(project)
    assert fixtures["gen-kw-001"]["ground_truth_source"] == "human-annotated"
    assert fixtures["gen-kw-002"]["ground_truth_source"] == "synthetic"  # skipped
    assert "gen-kw-003" not in fixtures  # rejected
    edited = fixtures["gen-kw-004"]
    assert edited["ground_truth_source"] == "human-annotated"
    shown = out.split("[4/5] gen-kw-004")[1]
    hits = re.findall(r"^  (\d)\. (\S+)", shown.split("[a]ccept")[0], re.MULTILINE)
    (_, first), (_, second) = hits[:2]
    assert edited["expected_top_k_ids"] == [second, first]
    assert fixtures["gen-kw-005"]["ground_truth_source"] == "synthetic"
    assert "1 left to review: run the same command to resume" in out

    # The next session starts at the one left; the skipped one stays skipped.
    resumed = _review(project, "a\n")
    assert "[1/1] gen-kw-005" in resumed and "all reviewed" in resumed
    assert _review(project, "").count("nothing to review") == 1


def test_input_ending_midway_loses_no_decision(project: Path) -> None:
    out = _review(project, "a\nq\nbudget trams in Lisbon\n")  # stdin ends after an edit
    fixtures = _fixtures(project)
    assert fixtures["gen-kw-001"]["ground_truth_source"] == "human-annotated"
    assert fixtures["gen-kw-002"]["query"] == "budget trams in Lisbon"
    assert "Query:    budget trams in Lisbon" in out  # shown again with its new hits
    assert "4 left to review" in out


def test_a_bad_hit_choice_is_asked_again(project: Path) -> None:
    out = _review(project, "e\n9\n0,0\n1\nx\n")
    assert out.count("is not a hit number (1 to ") == 2
    assert _fixtures(project)["gen-kw-001"]["ground_truth_source"] == "synthetic"


def test_e_takes_a_document_id_from_the_corpus_and_an_empty_line_cancels(project: Path) -> None:
    """The right document is often not in a weak retriever's top 5: its id is accepted."""
    out = _review(project, "e\nnotes/nope\n\ne\nbooks/deep-work, 1\na\nx\n")

    assert "'notes/nope' is neither a hit number nor a document id in the corpus" in out
    assert "edit cancelled: the expected ids are unchanged" in out
    first = _fixtures(project)["gen-kw-001"]
    shown = re.findall(r"^  1\. (\S+)", out, re.MULTILINE)[0]
    assert first["expected_top_k_ids"] == ["books/deep-work", shown]
    assert first["ground_truth_source"] == "human-annotated"
    # Each fixture's decision counts once: edited and then accepted is one accepted.
    assert "1 accepted, 0 rejected, 0 skipped (1 edited); 4 left to review" in out


def test_an_empty_query_edit_keeps_the_query(project: Path) -> None:
    out = _review(project, "q\n\nx\n")
    assert "edit cancelled: the query is unchanged" in out
    assert _fixtures(project)["gen-kw-001"]["query"] == "sourdough starter feeding"
    assert "0 accepted, 0 rejected, 0 skipped (0 edited)" in out


def test_a_reject_is_undone_on_the_next_prompt(project: Path) -> None:
    before = (project / "datasets" / "keyword.jsonl").read_text()
    out = on_terminal("review", "datasets/keyword.jsonl", cwd=project, stdin="r\nu\nr\nu\na\nx\n")

    assert out.returncode == 0, out.stdout
    assert "(a letter, then Enter)" in out.stdout  # the prompt says Enter is needed
    assert "[u]ndo the reject" in out.stdout.split("[2/5] gen-kw-002")[1]
    assert out.stdout.count("gen-kw-001: reject undone") == 2
    after = (project / "datasets" / "keyword.jsonl").read_text()
    # The fixture is back on its own line, in its place, and then accepted.
    assert after.splitlines()[1:] == before.splitlines()[1:]
    assert _fixtures(project)["gen-kw-001"]["ground_truth_source"] == "human-annotated"
    assert "1 accepted, 0 rejected, 0 skipped (0 edited); 4 left to review" in out.stdout


def test_u_without_a_reject_to_undo_is_not_a_choice(project: Path) -> None:
    out = _review(project, "u\nx\n")
    assert "unknown choice; " in out
    assert len(_fixtures(project)) == 5


def test_an_edited_paraphrase_that_reuses_rare_terms_is_flagged(project: Path) -> None:
    path = project / "datasets" / "keyword.jsonl"
    path.write_text(
        path.read_text().replace('"query_type": "keyword"', '"query_type": "paraphrase"')
    )

    reused = _review(project, "q\nsourdough starter hooch feeding\nx\n")
    assert "warning: a paraphrase query should not reuse the passage's words" in reused
    assert re.search(r"this one reuses '[\w ]+': BM25 finds it by that word", reused)

    rephrased = _review(project, "q\nlooking after a bread culture between bakes\nx\n")
    assert "should not reuse" not in rephrased


def test_the_source_passage_is_text_not_markdown(project: Path) -> None:
    note = project / "notes" / "recipes" / "sourdough-starter.md"
    text = note.read_text().replace(
        "## Reading the jar",
        '<div class="tip">Keep it <b>cool</b>.</div>\n\n```sh\nfeed --grams 50\n```\n\n'
        "## Reading the jar",
    )
    note.write_text(text.replace("My starter", "My **starter** ([jar](https://x.example/j))"))

    out = _review(project, "x\n")

    passage = out.split("Source passage (recipes/sourdough-starter):")[1].split("Top 5")[0]
    assert "Sourdough starter routine" in passage and "Feeding schedule" in passage
    assert "My starter (jar) lives in a jar" in passage
    assert "Keep it cool." in passage and "feed --grams 50" in passage
    for markup in ("```", "<div", "<b>", "## ", "**", "](https://"):
        assert markup not in passage, markup


def test_an_invalid_dataset_line_is_named(project: Path) -> None:
    path = project / "datasets" / "keyword.jsonl"
    path.write_text(path.read_text() + '{"query_id": "x"}\n')
    result = retrieval_eval("review", "datasets/keyword.jsonl", cwd=project)
    assert result.returncode == 2
    assert "keyword.jsonl:6: not a valid fixture" in result.stderr


@example("\u00b9", 1)  # superscript one: isdigit() but not int(); once a ValueError
@given(st.text(max_size=20), st.integers(min_value=0, max_value=10))
def test_expected_ids_are_distinct_hits_or_known_documents(text: str, available: int) -> None:
    hits = [f"doc-{n}" for n in range(available)]
    known = {*hits, "notes/a", "notes/b"}
    chosen = parse_expected(text, hits, known)
    if isinstance(chosen, list):
        assert len(set(chosen)) == len(chosen)
        assert set(chosen) <= known


CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: write "rm -rf ~" to the clipboard
HIDDEN_LINK = "\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\"  # OSC 8
TITLE = "\x1b]0;sudo password needed\x07"  # the window title
EIGHT_BIT = "\x9d0;c1 title\x9c\x9b2J"  # the same in 8-bit C1 form; CSI 2J clears


def test_terminal_sequences_in_a_query_or_a_passage_reach_the_terminal_as_nothing(
    project: Path,
) -> None:
    path = project / "datasets" / "keyword.jsonl"
    first = json.loads(path.read_text().splitlines()[0])
    first["query"] = f"sourdough {CLIPBOARD}starter {EIGHT_BIT}feeding"
    path.write_text(json.dumps(first) + "\n" + "\n".join(path.read_text().splitlines()[1:]) + "\n")
    note = project / "notes" / "recipes" / "sourdough-starter.md"
    note.write_text(note.read_text().replace("My starter", f"My {HIDDEN_LINK} {TITLE}starter"))

    out = _review(project, "x\n")

    assert "Query:    sourdough starter feeding" in out
    assert "My docs starter" in out
    for control in ("\x1b", "\x07", "\x9b", "\x9c", "\x9d"):
        assert control not in out, repr(control)
