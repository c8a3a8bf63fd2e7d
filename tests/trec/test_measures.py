"""trec_eval's measure names, parameters and defaults (trec/measures.py)."""

from __future__ import annotations

import re

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.trec.measures import parse_trec_measures


def test_trec_measures_follow_trec_eval_order_and_defaults() -> None:
    measures = parse_trec_measures(["ndcg_cut.10,5", "recip_rank", "num_q", "P", "success"])
    assert [m.name for m in measures] == [
        "num_q",
        "recip_rank",
        "P_5",
        "P_10",
        "P_15",
        "P_20",
        "P_30",
        "P_100",
        "P_200",
        "P_500",
        "P_1000",
        "ndcg_cut_5",
        "ndcg_cut_10",
        "success_1",
        "success_5",
        "success_10",
    ]
    assert [m.name for m in parse_trec_measures(["official"])][:12] == [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall_0.00",
        "iprec_at_recall_0.10",
    ]
    # trec_eval reads cut-offs with strtol and keeps the first parameters given.
    assert [m.name for m in parse_trec_measures(["ndcg_cut.23.4", "ndcg_cut.5"])] == ["ndcg_cut_23"]


def test_trec_measure_errors() -> None:
    with pytest.raises(ConfigError, match="unsupported trec_eval measure 'dcg'"):
        parse_trec_measures(["dcg"])
    with pytest.raises(ConfigError, match=re.escape("measure 'P.5,5': duplicate cut-offs")):
        parse_trec_measures(["P.5,5"])
    with pytest.raises(ConfigError, match="cut-offs must be positive integers"):
        parse_trec_measures(["P.0"])
