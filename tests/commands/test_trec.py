"""``retrieval-eval trec`` as a user runs it: real files, a real subprocess, exact output."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.tools.trec.report import format_trec, score_trec_run
from retrieval_eval.tools.trec.text import tokens as trec_tokens
from retrieval_eval.tools.trec.text.files import read_qrels


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), "trec", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def cranfield_files(
    cranfield_beir: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """Cranfield's real judgments, and a run that retrieves some of them among decoys.

    Scores come in steps of 0.5 so many tie; lines are shuffled and the rank column lies.
    """
    rng = np.random.default_rng(7)
    folder = tmp_path_factory.mktemp("cranfield")
    rows = [
        line.split("\t")
        for line in (cranfield_beir / "qrels" / "test.tsv").read_text().splitlines()[1:]
    ]
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    judged: dict[str, list[str]] = {}
    for q, d, _ in rows:
        judged.setdefault(q, []).append(d)
    lines = []
    for q, docs in judged.items():
        if rng.random() < 0.1:
            continue  # some queries missing from the run
        keep = [d for d in docs if rng.random() < 0.6]
        decoys = [
            str(x)
            for x in rng.choice(np.arange(1, 1401), size=30, replace=False)
            if str(x) not in docs
        ]
        for d in keep + decoys:
            lines.append(
                f"{q} Q0 {d} {rng.integers(1, 99)} {rng.integers(0, 12) / 2:.1f} cranrun\n"
            )
    run = folder / "run.txt"
    run.write_text("".join(lines[i] for i in rng.permutation(len(lines))))
    return qrels, run


def _pytrec_reference(qrels: Path, run: Path, measures: set[str]) -> dict[str, dict[str, float]]:
    with qrels.open() as handle:
        judgments = pytrec_eval.parse_qrel(handle)
    with run.open() as handle:
        results = pytrec_eval.parse_run(handle)
    return pytrec_eval.RelevanceEvaluator(judgments, measures).evaluate(results)


def test_cranfield_output_matches_trec_eval(cranfield_files: tuple[Path, Path]) -> None:
    qrels, run = cranfield_files
    measures = [
        "map",
        "Rprec",
        "recip_rank",
        "P.5,10",
        "recall.10,100",
        "ndcg_cut.10",
        "map_cut.10",
    ]
    reference = _pytrec_reference(
        qrels, run, {m for m in measures} | {"num_ret", "num_rel", "num_rel_ret"}
    )
    names = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P_5", "P_10"]
    names += ["recall_10", "recall_100", "ndcg_cut_10", "map_cut_10"]
    counts = {"num_q", "num_ret", "num_rel", "num_rel_ret"}

    def line(name: str, qid: str, value: float) -> str:
        return (
            f"{name:<22}\t{qid}\t{int(value)}"
            if name in counts
            else f"{name:<22}\t{qid}\t{value:6.4f}"
        )

    expected = []
    for qid in sorted(reference):
        expected.extend(line(name, qid, reference[qid][name]) for name in names)
    expected.append(line("num_q", "all", len(reference)))
    for name in names:
        values = [reference[qid][name] for qid in reference]
        expected.append(
            line(name, "all", sum(values) if name in counts else sum(values) / len(values))
        )

    args = ["-q", "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret"]
    for measure in measures:
        args += ["-m", measure]
    completed = run_cli(*args, qrels, run)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == expected
    assert len(reference) > 150


def test_exact_text_and_tie_breaking_on_a_tiny_run(tmp_path: Path) -> None:
    # Three documents tie at 2.0: trec_eval orders them b, ab, a (ids descending),
    # whatever the rank column says, so the relevant "a" is at rank 3.
    qrels = tmp_path / "qrels"
    qrels.write_text("7 0 a 1\n7 0 zz 0\n10 0 x 2\n")
    run = tmp_path / "run"
    run.write_text("7 Q0 a 1 2.0 t\n7 Q0 ab 2 2.0 t\n7 Q0 b 3 2.0 t\n7 Q0 c 4 9 t\n10 Q0 x 1 1 t\n")
    completed = run_cli("-q", "-m", "recip_rank", "-m", "P.2", "-m", "num_ret", qrels, run)
    assert completed.returncode == 0
    assert completed.stdout == (
        "num_ret               \t10\t1\n"
        "recip_rank            \t10\t1.0000\n"
        "P_2                   \t10\t0.5000\n"
        "num_ret               \t7\t4\n"
        "recip_rank            \t7\t0.2500\n"
        "P_2                   \t7\t0.0000\n"
        "num_ret               \tall\t5\n"
        "recip_rank            \tall\t0.6250\n"
        "P_2                   \tall\t0.2500\n"
    )


def test_complete_flag_and_json(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n2 0 b 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 1.0 t\n")
    plain = json.loads(run_cli("--json", "-m", "recip_rank", "-m", "num_q", qrels, run).stdout)
    assert plain == {"all": {"num_q": 1, "recip_rank": 1.0}}
    complete = json.loads(
        run_cli("--json", "-c", "-q", "-m", "recip_rank", "-m", "num_q", qrels, run).stdout
    )
    assert complete == {
        "all": {"num_q": 2, "recip_rank": 0.5},
        "per_query": {"1": {"recip_rank": 1.0}, "2": {"recip_rank": 0.0}},
    }


@pytest.mark.parametrize(
    ("qrels_text", "run_text", "message"),
    [
        (
            "1 0 a 1\n",
            "1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5\n",
            "run:2: expected 6 whitespace-separated fields (qid Q0 docid rank score tag), found 5",
        ),
        ("1 0 a 1\n", "1 Q0 a 1 1.0 t\n1 Q0 b 2 high t\n", "run:2: score 'high' is not a number"),
        ("1 0 a 1\n1 0 b yes\n", "1 Q0 a 1 1.0 t\n", "qrels:2: relevance 'yes' is not an integer"),
        (
            "1 0 a 1 extra\n",
            "1 Q0 a 1 1.0 t\n",
            "qrels:1: expected 4 whitespace-separated fields (qid iter docid rel), found 5",
        ),
        (
            "1 0 a 1\n1 0 a 0\n",
            "1 Q0 a 1 1.0 t\n",
            "qrels:2: document 'a' is judged twice for query '1'; keep one line",
        ),
        (
            "1 0 a 1\n",
            "1 Q0 a 1 1.0 t\n1 Q0 a 2 0.5 t\n",
            "run:2: document 'a' appears twice for query '1'; list each document once per query",
        ),
        (
            "1 0 a 1\n",
            "2 Q0 a 1 1.0 t\n",
            "run: no query has both results in the run and judgments in the "
            "qrels; check the query ids",
        ),
        ("1 0 a 1\n", "1 Q0 a 1 nan t\n", "run:1: score is NaN; scores must be numbers"),
        # Python's (and numpy's) number syntax once read this as 15, where C's strtod
        # (trec_eval) stops at the underscore. (A grade "1_0" is atol's 1.)
        ("1 0 a 1\n", "1 Q0 a 1 1_5 t\n", "run:1: score '1_5' is not a number"),
        # Once "unexpected OverflowError ... a bug in retrieval-eval".
        (
            "1 0 a 1\n1 0 b 99999999999999999999\n",
            "1 Q0 a 1 1.0 t\n",
            "qrels:2: relevance '99999999999999999999' is out of range; "
            "grades must lie within ±9,223,372,036,854,775,807",
        ),
    ],
)
def test_bad_input_names_file_and_line_and_exits_2(
    tmp_path: Path, qrels_text: str, run_text: str, message: str
) -> None:
    (tmp_path / "qrels").write_text(qrels_text)
    (tmp_path / "run").write_text(run_text)
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("retrieval-eval")), "trec", "qrels", "run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stderr == f"error: {message}\n"
    assert completed.stdout == ""


def test_missing_file_exits_2(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("1 Q0 a 1 1.0 t\n")
    completed = run_cli(tmp_path / "nope", tmp_path / "run")
    assert completed.returncode == 2
    assert completed.stderr == f"error: {tmp_path / 'nope'}: file not found\n"


def test_irregular_whitespace_comments_and_long_scores_parse_like_clean_files(
    tmp_path: Path,
) -> None:
    clean_qrels = "1 0 a 2\n1 0 b 1\n2 0 c 1\n"
    clean_run = "1 Q0 b 1 0.30000000000000004 t\n1 Q0 a 2 1e-1 t\n1 Q0 z 3 -2.5 t\n2 Q0 c 1 7 t\n"
    messy_qrels = "# judged by hand\n1\t0  a 2\r\n\n1 0 b   1\n2 0 c 1"
    messy_run = (
        "  1 Q0 b 1 0.30000000000000004 t extra fields\n1\tQ0\ta\t2\t1e-1\tt\r\n"
        "\n# note\n1 Q0 z 3 -2.5 t\n2 Q0 c 1 7 t"
    )
    outputs = []
    for name, qrels_text, run_text in (
        ("clean", clean_qrels, clean_run),
        ("messy", messy_qrels, messy_run),
    ):
        (tmp_path / f"{name}.qrels").write_text(qrels_text)
        (tmp_path / f"{name}.run").write_text(run_text)
        result = score_trec_run(
            tmp_path / f"{name}.qrels", tmp_path / f"{name}.run", ("map", "ndcg_cut.3", "num_ret")
        )
        outputs.append(format_trec(result, per_query=True))
    assert outputs[0] == outputs[1]
    # b (score 0.3, grade 1) ranks above a (0.1, grade 2): (1 + 2/log2(3)) / (2 + 1/log2(3))
    assert "ndcg_cut_3            \t1\t0.8597\n" in outputs[0]


def test_lines_split_across_read_blocks(
    cranfield_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    qrels, run = cranfield_files
    measures = ("map", "ndcg_cut.10", "P.5", "num_ret")
    whole = format_trec(score_trec_run(qrels, run, measures), per_query=True)
    long_id = "x" * 300  # longer than a whole block: the buffer has to grow
    long_run = tmp_path / "run_with_long_id"
    long_run.write_text(run.read_text() + f"1 Q0 {long_id} 1 -100 t\n")
    monkeypatch.setattr(trec_tokens, "BLOCK_BYTES", 64)
    assert format_trec(score_trec_run(qrels, run, measures), per_query=True) == whole
    with_long = format_trec(score_trec_run(qrels, long_run, measures), per_query=True)
    monkeypatch.undo()
    assert with_long == format_trec(score_trec_run(qrels, long_run, measures), per_query=True)


def _trec_order_lines(run: dict[str, dict[str, str]]) -> list[str]:
    """Each query's lines together, in trec_eval's order: score descending, id descending."""
    lines = []
    for qid, docs in run.items():
        ranked = sorted(docs.items(), reverse=True)  # ids descending (ASCII: strcmp order)
        ranked.sort(key=lambda item: -float(item[1]))  # stable: a tie keeps the id order
        lines += [
            f"{qid} Q0 {doc} {rank} {score} tag\n" for rank, (doc, score) in enumerate(ranked)
        ]
    return lines


def _cli_output(qrels: Path, run: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("-q", "-m", "all_trec", qrels, run)


@st.composite
def scattered_runs(draw: st.DrawFn) -> tuple[str, dict[str, dict[str, str]], list[int]]:
    """Queries with ids short and long, 1-30 results each, scores that often tie."""
    qids = draw(
        st.lists(
            st.text("0123456789qx", min_size=1, max_size=20), min_size=1, max_size=6, unique=True
        )
    )
    run: dict[str, dict[str, str]] = {}
    qrels_lines = []
    for qid in qids:
        docs = draw(
            st.lists(
                st.text("abcdz019", min_size=1, max_size=18), min_size=1, max_size=30, unique=True
            )
        )
        scores = st.sampled_from(
            ["1", "1.0", "0.5", "0", "-0.0", "-2.25", "3e0", "0.1000000000000001"]
        )
        run[qid] = {doc: draw(scores) for doc in docs}
        judged = draw(st.lists(st.sampled_from(docs), unique=True))  # none, some or all
        qrels_lines += [f"{qid} 0 {doc} {draw(st.integers(-1, 3))}\n" for doc in judged]
    lines = sum(len(docs) for docs in run.values())
    order = draw(st.permutations(range(lines)))
    return "".join(qrels_lines), run, list(order)


@pytest.mark.slow
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(drawn=scattered_runs())
def test_shuffled_lines_print_exactly_what_the_same_run_in_order_prints(
    tmp_path: Path, drawn: tuple[str, dict[str, dict[str, str]], list[int]]
) -> None:
    """Runs concatenated from shards scatter each query's lines; trec_eval ignores line order."""
    qrels_text, run, order = drawn
    if not qrels_text:
        return
    in_order = _trec_order_lines(run)
    qrels = tmp_path / "qrels"
    qrels.write_text(qrels_text)
    outputs = []
    for name, lines in (("sorted", in_order), ("shuffled", [in_order[i] for i in order])):
        (tmp_path / name).write_text("".join(lines))
        outputs.append(_cli_output(qrels, tmp_path / name))
    assert outputs[0].returncode == outputs[1].returncode == 0, outputs[0].stderr
    assert outputs[0].stdout == outputs[1].stdout


@pytest.mark.slow
def test_many_queries_with_scattered_lines_print_what_they_print_in_order(tmp_path: Path) -> None:
    """Over 65,536 queries: the regrouping places lines without a 16-bit radix sort."""
    rng = np.random.default_rng(11)
    queries = 70_000
    lines = []
    qrels_lines = []
    for q in range(queries):
        scores = rng.integers(0, 3, size=3) / 2
        docs = [f"d{q % 7}{j}" for j in range(3)]
        ranked = sorted(zip(scores, docs, strict=True), key=lambda item: item[1], reverse=True)
        ranked.sort(key=lambda item: -item[0])
        lines += [f"{q} Q0 {doc} 0 {score} t\n" for score, doc in ranked]
        qrels_lines.append(f"{q} 0 {docs[q % 3]} {q % 3}\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(qrels_lines))
    (tmp_path / "sorted").write_text("".join(lines))
    (tmp_path / "shuffled").write_text("".join(lines[i] for i in rng.permutation(len(lines))))
    sorted_output = _cli_output(qrels, tmp_path / "sorted")
    assert sorted_output.returncode == 0, sorted_output.stderr
    assert _cli_output(qrels, tmp_path / "shuffled").stdout == sorted_output.stdout


_CLEAN_QRELS = "1 0 a 2\n1 0 b 1\n2 0 c 1\n2 0 d 0\n"
_CLEAN_RUN = "1 Q0 a 1 0.9 t\n1 Q0 z 2 0.8 t\n1 Q0 b 3 0.7 t\n2 Q0 d 1 3 t\n2 Q0 c 2 2 t\n"


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda text: b"\xef\xbb\xbf" + text.encode(), id="utf8-bom"),
        pytest.param(lambda text: text.replace("\n", "\r").encode(), id="lone-cr"),
        pytest.param(
            lambda text: b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(), id="bom-crlf"
        ),
    ],
)
def test_byte_order_mark_and_old_mac_line_endings_read_as_the_clean_file(
    tmp_path: Path, encode: object
) -> None:
    """A BOM once made the first query id '\\ufeff1', splitting query 1 in two; a run with
    lone \\r endings was read as its first line alone (extra fields are ignored)."""
    assert callable(encode)
    (tmp_path / "qrels").write_text(_CLEAN_QRELS)
    (tmp_path / "run").write_text(_CLEAN_RUN)
    (tmp_path / "qrels.odd").write_bytes(encode(_CLEAN_QRELS))
    (tmp_path / "run.odd").write_bytes(encode(_CLEAN_RUN))
    measures = ("-q", "-m", "num_ret", "-m", "num_rel", "-m", "map", "-m", "P.2")
    clean = run_cli(*measures, tmp_path / "qrels", tmp_path / "run")
    assert clean.returncode == 0
    assert "num_ret               \tall\t5\n" in clean.stdout
    for qrels, run in (("qrels.odd", "run"), ("qrels", "run.odd"), ("qrels.odd", "run.odd")):
        odd = run_cli(*measures, tmp_path / qrels, tmp_path / run)
        assert (odd.returncode, odd.stderr) == (0, "")
        assert odd.stdout == clean.stdout


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_files_are_refused_saying_so(tmp_path: Path, encoding: str) -> None:
    """PowerShell's `>` writes UTF-16: the NUL bytes once read as separators, giving
    "score 'd' is not a number" or "found 6 fields" for a line with four."""
    (tmp_path / "qrels").write_text(_CLEAN_QRELS)
    bom = {"utf-16-be": "\ufeff"}.get(encoding, "")
    (tmp_path / "run").write_bytes((bom + _CLEAN_RUN.replace("\n", "\r\n")).encode(encoding))
    completed = run_cli(tmp_path / "qrels", tmp_path / "run")
    assert completed.returncode == 2
    name = "UTF-32" if encoding == "utf-32" else "UTF-16"
    assert completed.stderr == (
        f"error: {tmp_path / 'run'}:1: the file is {name} text (it starts with a {name} "
        "byte-order mark); save it as UTF-8 (in PowerShell: Out-File -Encoding utf8)\n"
    )


def test_errors_in_lone_cr_files_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text(_CLEAN_QRELS)
    (tmp_path / "run").write_bytes(b"1 Q0 a 1 0.9 t\r1 Q0 b 2 0.5 t\r\r2 Q0 c 1 high t\r")
    completed = run_cli(tmp_path / "qrels", tmp_path / "run")
    assert completed.returncode == 2
    assert completed.stderr == f"error: {tmp_path / 'run'}:4: score 'high' is not a number\n"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=9, max_size=9),
    blank=st.lists(st.sampled_from(["", "\n", "\r", "\r\n", "  \r"]), min_size=9, max_size=9),
    bom=st.booleans(),
    final=st.booleans(),
    gzipped=st.booleans(),
    block=st.integers(min_value=16, max_value=96),
)
def test_any_mix_of_line_endings_reads_like_newlines(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    endings: list[str],
    blank: list[str],
    bom: bool,
    final: bool,
    gzipped: bool,
    block: int,
) -> None:
    """\\n, \\r\\n and lone \\r endings, blank lines and a BOM, with read blocks cut anywhere
    (a \\r\\n pair split between two reads must stay one line end)."""
    (tmp_path / "qrels").write_text(_CLEAN_QRELS)
    lines = (_CLEAN_RUN + "2 Q0 e 3 1 t\n1 Q0 y 4 0.1 t\n2 Q0 f 4 0 t\n1 Q0 x 5 0 t\n").split("\n")[
        :-1
    ]
    text = "".join(
        line + end + extra for line, end, extra in zip(lines, endings, blank, strict=True)
    )
    if not final:
        text = text.rstrip("\r\n ")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    (tmp_path / "run").write_bytes(gzip.compress(data) if gzipped else data)
    (tmp_path / "clean").write_text("\n".join(lines) + "\n")
    measures = ("map", "P.2", "num_ret", "recip_rank")
    want = format_trec(
        score_trec_run(tmp_path / "qrels", tmp_path / "clean", measures), per_query=True
    )
    monkeypatch.setattr(trec_tokens, "BLOCK_BYTES", block)
    got = format_trec(
        score_trec_run(tmp_path / "qrels", tmp_path / "run", measures), per_query=True
    )
    assert got == want


def _atol(text: str) -> int | None:
    """glibc's atol, written out: the leading integer; None if none or past 64 bits (which
    atol clamps and trec_eval then fails on: it sizes a table by the highest grade)."""
    sign, digits = (text[0], text[1:]) if text[:1] in "+-" else ("", text)
    leading = len(digits) - len(digits.lstrip("0123456789"))
    if leading == 0:
        return None
    value = int(sign + digits[:leading])
    return value if -(2**63) <= value < 2**63 else None


@settings(max_examples=200, deadline=None)
@given(
    grades=st.lists(
        st.one_of(
            st.integers(-(2**63), 2**63 - 1).map(str),
            st.integers(-(2**63), 2**63 - 1).map(lambda n: f"+{n}" if n >= 0 else str(n)),
            st.integers(2**63, 2**80).flatmap(lambda n: st.sampled_from([str(n), f"-{n + 1}"])),
            st.from_regex(r"\A-?[0-9]{1,3}_[0-9]{1,3}\Z"),
            st.from_regex(r"\A[+-]?[0-9]{1,3}(\.[0-9]*|e\+?[0-9]+|x[0-9a-f]+|\.1\.11)\Z"),
            st.from_regex(r"\A[+-]?[a-z.][a-z0-9.]{0,4}\Z"),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_grades_are_read_like_atol_or_a_line_named_error(grades: list[str]) -> None:
    """trec_eval reads a grade with atol: ``1.0`` is 1, ``2.7`` is 2, ``1e+8`` is 1, ``1_0``
    is 1. Before, ``1.0`` stopped the run ("not an integer")."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qrels"
        path.write_text("".join(f"1 0 d{i} {grade}\n" for i, grade in enumerate(grades)))
        read = [_atol(grade) for grade in grades]
        bad = [i for i, value in enumerate(read) if value is None]
        if not bad:
            assert read_qrels(path).value.tolist() == read
            return
        with pytest.raises(InputError) as raised:
            read_qrels(path)
        assert raised.value.line == bad[0] + 1
        assert repr(grades[bad[0]]) in raised.value.message


def test_a_grade_written_as_a_decimal_scores_as_trec_eval_reads_it(tmp_path: Path) -> None:
    """``1.0`` and ``2.5`` are trec_eval's 1 and 2 (atol); ``0.9`` is 0, judged non-relevant."""
    decimal = tmp_path / "qrels.decimal"
    decimal.write_text("1 0 a 1.0\n1 0 b 2.5\n1 0 c 0.9\n2 0 a 1.000\n")
    plain = tmp_path / "qrels.plain"
    plain.write_text("1 0 a 1\n1 0 b 2\n1 0 c 0\n2 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 c 1 3 t\n1 Q0 b 2 2 t\n1 Q0 a 3 1 t\n2 Q0 a 1 1 t\n")
    want = run_cli("-q", "-m", "all_trec", plain, run)
    got = run_cli("-q", "-m", "all_trec", decimal, run)
    assert want.returncode == 0, want.stderr
    assert (got.returncode, got.stderr, got.stdout) == (0, "", want.stdout)
    assert "relstring             \t1\t'021'\n" in got.stdout


def test_gzipped_and_piped_files_read_as_the_plain_ones(tmp_path: Path) -> None:
    """run.gz was parsed as its compressed bytes ("score '+4T' is not a number"), and a pipe
    (`<(zcat run.gz)`, /dev/stdin) was "file not found"."""
    (tmp_path / "qrels").write_text(_CLEAN_QRELS)
    (tmp_path / "run").write_text(_CLEAN_RUN)
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(_CLEAN_QRELS.encode()))
    (tmp_path / "run.gz").write_bytes(gzip.compress(_CLEAN_RUN.encode()))
    measures = ("-q", "-m", "num_ret", "-m", "map", "-m", "P.2")
    clean = run_cli(*measures, tmp_path / "qrels", tmp_path / "run")
    assert clean.returncode == 0 and "num_ret" in clean.stdout
    for qrels, run in (("qrels.gz", "run"), ("qrels", "run.gz"), ("qrels.gz", "run.gz")):
        assert run_cli(*measures, tmp_path / qrels, tmp_path / run).stdout == clean.stdout
    command = [str(Path(sys.executable).with_name("retrieval-eval")), "trec", *measures]
    for piped in (_CLEAN_RUN.encode(), gzip.compress(_CLEAN_RUN.encode())):
        done = subprocess.run(
            [*command, str(tmp_path / "qrels"), "/dev/stdin"],
            input=piped,
            capture_output=True,
            check=False,
        )
        assert (done.returncode, done.stderr, done.stdout.decode()) == (0, b"", clean.stdout)


def test_a_truncated_gzip_is_a_line_named_error(tmp_path: Path) -> None:
    lines = "".join(f"1 Q0 d{i} {i} {1000 - i} t\n" for i in range(3000))
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    packed = gzip.compress(lines.encode())
    (tmp_path / "run.gz").write_bytes(packed[: len(packed) // 2])
    completed = run_cli(tmp_path / "qrels", tmp_path / "run.gz")
    assert completed.returncode == 2
    assert completed.stderr.startswith(f"error: {tmp_path / 'run.gz'}:1: cannot read the file")
    assert completed.stderr.endswith(
        "from here on: Compressed file ended before the end-of-stream marker was reached\n"
    )


def test_set_f_with_a_negative_beta_prints_trec_evals_nan_and_no_warning(tmp_path: Path) -> None:
    """beta = -1 with precision = recall divides 0 by 0: trec_eval prints -nan; numpy once
    also wrote a RuntimeWarning to stderr."""
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1.0 t\n")
    done = run_cli("-m", "set_F.-1", tmp_path / "qrels", tmp_path / "run")
    assert (done.returncode, done.stderr) == (0, "")
    assert "nan" in done.stdout
