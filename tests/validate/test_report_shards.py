"""A shard's validation: its own fixtures in full, the other shards' lines only counted."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.load.invisible import invisible_chars, same_id
from retrieval_eval.sharding import Shard
from retrieval_eval.validate import validate_datasets

# Any id the id rule accepts: nothing invisible in it, in any normalization form (it is
# compared, and reported, in NFC).
_ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(
    lambda text: not invisible_chars(text)
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(_ids, st.booleans(), st.booleans()),
        max_size=12,
        unique_by=lambda t: same_id(t[0]),
    ),
    st.integers(min_value=1, max_value=4),
)
def test_the_shards_own_every_fixture_once_and_count_every_line(
    rows: list[tuple[str, bool, bool]], count: int
) -> None:
    """However a query id is spelt (quotes, backslashes, any Unicode, the key first or
    last), each line belongs to exactly one shard, and each shard's per-file count and
    fixture order are the unsharded run's."""
    lines = []
    for query_id, human, id_last in rows:
        record = {
            "query": "a question",
            "retrieval_type": "keyword",
            "expected_top_k_ids": ["d1"],
            "ground_truth_source": "human-annotated" if human else "synthetic",
        }
        record = {**record, "query_id": query_id} if id_last else {"query_id": query_id, **record}
        lines.append(json.dumps(record, ensure_ascii=bool(human)))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "keyword.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        whole = validate_datasets([path], corpus=None, min_fixtures=len(rows), min_human=0)
        humans = sum(human for _, human, _ in rows)
        owned: list[str] = []
        for index in range(1, count + 1):
            share = validate_datasets(
                [path],
                corpus=None,
                min_fixtures=len(rows),
                min_human=humans,
                shard=Shard(index, count),
            )
            assert share.problems == whole.problems == []
            assert share.query_order[path] == tuple(same_id(query_id) for query_id, _, _ in rows)
            owned += [located.fixture.query_id for located in share.datasets[path]]
        assert sorted(owned) == sorted(same_id(query_id) for query_id, _, _ in rows)
