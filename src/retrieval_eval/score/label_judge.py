"""The LLM judge's view of one (query, document) pair: is the document relevant?

It fills no golden set by itself. The run asks it about the unlabelled documents
that newly entered a regressed query's top k (holes, so a reviewer sees a second
opinion beside each) and about a seeded sample of pairs the human labels already
decide (calibration, so the reviewer knows how far that opinion goes). Replies are
cached by what was judged (model, prompt version, query, document id and text):
asking again about the same pair costs nothing. Every paid call is checked
against the run's cost cap first (``CachedClaude``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from retrieval_eval.results import LabelJudgement
from retrieval_eval.score.cached_claude import CachedClaude
from retrieval_eval.score.judge import JudgeError, parse_score

# A score at or above this is "relevant".
RELEVANT_AT = 0.5
LABEL_PROMPT_VERSION = "label-v1"
# The document text the judge reads, at most: a long document is judged by its opening.
DOCUMENT_CHARS = 4000

_PROMPT = """You label search results. Would a person who typed this query want to see this
document: is it relevant to the query? Score from 0.0 to 1.0: 1.0 = clearly relevant,
0.5 = partly relevant, 0.0 = not relevant.
Reply with only a JSON object: {{"score": <number between 0 and 1>}}

Query: {query}

Document ({doc_id}):
{text}"""


# What a recorded judgment was asked with: the template and how much of a document it reads.
# A judgment made with another prompt is stale (``retrieval_eval.load.judgments``).
LABEL_PROMPT_SHA256 = hashlib.sha256(
    json.dumps([_PROMPT, DOCUMENT_CHARS], ensure_ascii=False).encode("utf-8")
).hexdigest()


def label_prompt(query: str, doc_id: str, text: str) -> str:
    """The exact prompt the judge is sent about one (query, document) pair."""
    return _PROMPT.format(query=query, doc_id=doc_id, text=text[:DOCUMENT_CHARS])


@dataclass(frozen=True)
class JudgedPair:
    judgement: LabelJudgement
    cost_usd: float
    cached: bool


class LabelJudge:
    def __init__(self, claude: CachedClaude) -> None:
        self._claude = claude
        self.model = claude.model

    @property
    def spent_usd(self) -> float:
        return self._claude.spent_usd

    @property
    def calls(self) -> int:
        return self._claude.calls

    @property
    def tokens(self) -> tuple[int, int]:
        """(input, output) tokens of the paid calls so far."""
        return self._claude.input_tokens, self._claude.output_tokens

    def judge(self, query_id: str, query: str, doc_id: str, text: str) -> JudgedPair:
        """``CostCapReached`` when the call could pass the cap; ``JudgeError`` on a bad reply."""
        prompt = label_prompt(query, doc_id, text)
        reply = self._claude.ask(prompt, about=f"the judge's label of {doc_id!r} for {query_id!r}")
        try:
            score = parse_score(reply.text, query_id=query_id)
        except JudgeError:
            self._claude.forget(prompt)  # a malformed reply must not be served again
            raise
        judgement = LabelJudgement(relevant=score >= RELEVANT_AT, score=score, model=self.model)
        return JudgedPair(judgement, reply.cost_usd, reply.cached)
