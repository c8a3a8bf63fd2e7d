// A minimal search service in TypeScript speaking retrieval-eval's JSON-lines protocol.
//
// retrieval-eval starts it once (`command = ["node", "examples/typescript/search.js"]`
// under `[retrievers.custom]`) and writes one JSON request per line on its stdin:
//
//   {"op": "index", "documents": [{"id", "title", "text", "tags", "metadata"}, ...]}
//   {"op": "search", "query": "...", "k": 10, "tags": ["travel"]}
//   {"op": "search_many", "queries": [{"query", "k", "tags"}, ...]}
//
// It answers each with one JSON line on stdout; logs go to stderr. Its `index` answer
// says `"batch": true`, so the queries come as `search_many` requests, answered all in
// one line with each query's hits as columns (`ids`, `scores`, `texts`), the cheapest
// form to send and to check; `search`, answered with hit objects, is the form without
// batches. Replace `rank` with a call to your own system (a Postgres pool, a vector
// store client, ...).
// search.js beside this file is `tsc`'s output (npx tsc -p examples/typescript).
import { createInterface } from "node:readline";
const STOP_WORDS = new Set("a an and are as at be by for in is of on or the to with".split(" "));
function words(text) {
    const found = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
    return new Set(found.filter((word) => !STOP_WORDS.has(word)));
}
// Documents sharing the most words with the query; only those carrying ANY of `tags`
// when tags are given (none carry them: no result, never an unfiltered one).
function rank(documents, query, k, tags) {
    const wanted = new Set(tags);
    const queryWords = words(query);
    const hits = [];
    for (const doc of documents) {
        if (wanted.size > 0 && !doc.tags.some((tag) => wanted.has(tag)))
            continue;
        let score = 0;
        for (const word of queryWords)
            if (doc.words.has(word))
                score += 1;
        if (score > 0)
            hits.push({ id: doc.id, score, text: doc.text.slice(0, 500) });
    }
    hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return hits.slice(0, k);
}
let documents = [];
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
    const request = JSON.parse(line);
    let answer;
    if (request.op === "index") {
        documents = request.documents.map((doc) => ({
            ...doc,
            words: words(`${doc.title} ${doc.text}`),
        }));
        process.stderr.write(`indexed ${documents.length} documents\n`);
        const describe = { ranking: "shared words", language: "typescript" };
        answer = { ok: true, describe, batch: true };
    }
    else if (request.op === "search") {
        answer = { hits: rank(documents, request.query, request.k, request.tags) };
    }
    else if (request.op === "search_many") {
        answer = {
            answers: request.queries.map((query) => {
                const hits = rank(documents, query.query, query.k, query.tags);
                return {
                    ids: hits.map((hit) => hit.id),
                    scores: hits.map((hit) => hit.score),
                    texts: hits.map((hit) => hit.text),
                };
            }),
        };
    }
    else {
        answer = { error: `unknown op ${JSON.stringify(request.op)}` };
    }
    process.stdout.write(JSON.stringify(answer) + "\n");
});
