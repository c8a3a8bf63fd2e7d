"""The run's embedding model chosen once, before the corpus is indexed: ``"auto"`` by the
corpus size, or the one the baseline recorded; the same rule for every challenger; and a
line for the report only when one of the run's retrievers embeds."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.compare.dense_model import choose_run_model, resolve_dense_model
from retrieval_eval.index.model_catalog import AUTO_INT8_ABOVE, DEFAULT_MODEL, INT8_MODEL
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.settings import RunSettings, load_settings


def settings(tmp_path: Path, text: str) -> RunSettings:
    (tmp_path / "retrieval-eval.toml").write_text(text, encoding="utf-8")
    return load_settings(workdir=tmp_path, config_file=None, overrides={}, home=tmp_path, cores=2)


HYBRID_RUN = (
    '[dataset_retrievers]\n"notes.jsonl" = "hybrid"\n[challengers.small]\nretriever = "dense"\n'
)


def test_auto_follows_the_corpus_size_and_every_challenger_follows_the_same_rule(
    tmp_path: Path,
) -> None:
    loaded = settings(tmp_path, HYBRID_RUN)
    small, choice = resolve_dense_model(loaded, documents=AUTO_INT8_ABOVE)
    assert choice is not None and choice.model == DEFAULT_MODEL
    assert small.retrievers.dense.model == DEFAULT_MODEL
    assert small.challengers["small"].retrievers.dense.model == DEFAULT_MODEL
    large, choice = resolve_dense_model(loaded, documents=AUTO_INT8_ABOVE + 1)
    assert choice is not None and choice.line == f"{INT8_MODEL} (auto: more than 10,000 documents)"
    assert large.retrievers.dense.model == INT8_MODEL
    assert large.challengers["small"].retrievers.dense.model == INT8_MODEL
    kept, choice = resolve_dense_model(
        loaded, documents=AUTO_INT8_ABOVE + 1, recorded={DEFAULT_MODEL}
    )
    assert kept.retrievers.dense.model == DEFAULT_MODEL
    assert choice is not None and "kept from the baseline" in choice.line


def test_a_run_that_embeds_nothing_reports_no_model(tmp_path: Path) -> None:
    loaded = settings(
        tmp_path,
        '[dataset_retrievers]\n"semantic.jsonl" = "bm25"\n"hybrid.jsonl" = "like"\n',
    )
    corpus = Corpus(documents=(Document(id="a", title="a", text="a"),), location="notes")
    heard: list[str] = []
    resolved, line = choose_run_model(loaded, corpus, set(), heard.append)
    assert line is None and heard == []
    assert resolved.retrievers.dense.model == DEFAULT_MODEL  # resolved all the same
    embedding = settings(tmp_path, HYBRID_RUN)
    _, line = choose_run_model(embedding, corpus, set(), heard.append)
    assert line == f"{DEFAULT_MODEL} (auto: 10,000 documents or fewer)"
    assert heard == [f"dense model: {line}; the corpus has 1 documents"]
