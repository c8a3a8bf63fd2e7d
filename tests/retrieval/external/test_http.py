"""`http`: a real threaded search service on 127.0.0.1, with faults injected."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.retrieval.service_helpers import TINY_CORPUS, beir_json, run_cli, tiny_beir
from tests.support.services import SearchService, search_service

DOCUMENTS = {d["_id"]: f"{d['title']} {d['text']}" for d in TINY_CORPUS}


def _config(tmp_path: Path, url: str, **extra: object) -> Path:
    lines = ["[retrievers.http]", f'url = "{url}"', "backoff_s = 0"]
    for key, value in extra.items():
        lines.append(
            f"{key} = {json.dumps(value) if not isinstance(value, dict) else _table(value)}"
        )
    path = tmp_path / "http.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _table(value: dict[str, str]) -> str:
    return "{" + ", ".join(f'{k} = "{v}"' for k, v in value.items()) + "}"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return tiny_beir(tmp_path / "tiny")


def test_queries_are_sent_concurrently_and_scored(tmp_path: Path, tiny: Path) -> None:
    # The service answers the timed queries only once four are in flight together, so
    # this passes only if the client really keeps `concurrency` requests open.
    service = SearchService(DOCUMENTS, barrier=threading.Barrier(4, timeout=60))
    with search_service(service) as url:
        summary = beir_json(tiny, "http", tmp_path / "out.json", config=_config(tmp_path, url))
        assert service.barrier is not None and not service.barrier.broken
    assert service.most_in_flight == 4
    assert len(service.requests) == 7  # one warm-up + six queries
    assert service.requests[1:] and {r["k"] for r in service.requests} == {100}
    assert sorted(r["query"] for r in service.requests[1:]) == sorted(
        q
        for q in (
            "wing flutter",
            "collapse of shells under load",
            "heat transfer",
            "flutter tests in a wind tunnel",
            "thin shells",
            "hypersonic boundary layer",
        )
    )
    assert all(r["tags"] == [] for r in service.requests)
    assert summary["num_queries"] == 6
    assert summary["recall@100"] == 1.0
    assert summary["latency_p50_ms"] > 0
    assert summary["config"]["url"] == url


def test_5xx_and_429_are_retried_and_the_run_succeeds(tmp_path: Path, tiny: Path) -> None:
    service = SearchService(DOCUMENTS, faults=["500", "429", "503"])
    with search_service(service) as url:
        summary = beir_json(tiny, "http", tmp_path / "out.json", config=_config(tmp_path, url))
    assert summary["recall@100"] == 1.0
    assert len(service.requests) == 7 + 3


def test_retries_give_up_with_one_line_and_exit_2(tmp_path: Path, tiny: Path) -> None:
    service = SearchService(DOCUMENTS, faults=["500"] * 10)
    with search_service(service) as url:
        done = run_cli(
            "beir",
            str(tiny),
            "--retriever",
            "http",
            "--config",
            str(_config(tmp_path, url, retries=2)),
        )
    assert done.returncode == 2
    # Before it, only the summary line of the step that ended (indexing).
    assert done.stderr.splitlines()[-1] == (
        f"error: http retriever {url}: answered 500 Internal Server Error "
        "(gave up after 3 attempts)"
    )
    assert done.stderr.count("error:") == 1
    assert len(service.requests) == 3


def test_a_slow_service_hits_the_timeout(tmp_path: Path, tiny: Path) -> None:
    service = SearchService(DOCUMENTS, faults=["hang", "hang"])
    with search_service(service) as url:
        done = run_cli(
            "beir",
            str(tiny),
            "--retriever",
            "http",
            "--config",
            str(_config(tmp_path, url, timeout_s=0.5, retries=1)),
        )
    assert done.returncode == 2
    last = done.stderr.splitlines()[-1]
    assert "no answer within timeout_s = 0.5 s (gave up after 2 attempts)" in last
    assert done.stderr.count("error:") == 1


def test_malformed_json_stops_the_evaluation(tmp_path: Path, tiny: Path) -> None:
    service = SearchService(DOCUMENTS, faults=["bad-json"])
    with search_service(service) as url:
        done = run_cli(
            "beir", str(tiny), "--retriever", "http", "--config", str(_config(tmp_path, url))
        )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith(
        f"error: http retriever {url}: the answer is not JSON"
    )
    assert "'<html>Bad gateway</html>'" in done.stderr
    assert len(service.requests) == 1  # not retried: the service answered, wrongly


def test_other_answer_shapes_are_mapped(tmp_path: Path, tiny: Path) -> None:
    def shape(hits: list[dict[str, Any]]) -> Any:
        return {
            "data": {"results": [{"doc": {"key": h["id"]}, "relevance": h["score"]} for h in hits]},
            "billing": {"usd": 0.001},
        }

    service = SearchService(DOCUMENTS, answer_shape=shape)
    config = _config(
        tmp_path,
        "URL",
        hits_path="$.data.results",
        id_field="doc.key",
        score_field="relevance",
        cost_field="billing.usd",
    )
    with search_service(service) as url:
        config.write_text(config.read_text().replace("URL", url))
        summary = beir_json(tiny, "http", tmp_path / "out.json", config=config)
    assert summary["recall@100"] == 1.0
    assert summary["config"]["hits_path"] == "$.data.results"


def test_headers_come_from_the_environment_and_never_show(tmp_path: Path, tiny: Path) -> None:
    service = SearchService(DOCUMENTS)
    with search_service(service) as url:
        config = _config(tmp_path, url, headers_env={"Authorization": "SEARCH_AUTH"})
        missing = run_cli(
            "beir",
            str(tiny),
            "--retriever",
            "http",
            "--config",
            str(config),
            env={"SEARCH_AUTH": ""},
        )
        summary = beir_json(
            tiny,
            "http",
            tmp_path / "out.json",
            config=config,
            env={"SEARCH_AUTH": "Bearer s3cret-token"},
        )
    assert missing.returncode == 2
    assert missing.stderr == (
        "error: retrievers.http.headers_env names SEARCH_AUTH, "
        "which is not set in the environment\n"
    )
    assert {h.get("Authorization") for h in service.headers} == {"Bearer s3cret-token"}
    assert "s3cret-token" not in (tmp_path / "out.json").read_text()
    assert summary["config"]["headers"] == ["Authorization"]


def test_an_unreachable_url_fails_before_any_query(tmp_path: Path, tiny: Path) -> None:
    from tests.support.services import free_port

    url = f"http://127.0.0.1:{free_port()}/search"
    done = run_cli(
        "beir", str(tiny), "--retriever", "http", "--config", str(_config(tmp_path, url))
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: retrievers.http.url: cannot connect to 127.0.0.1:")
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('url = "ftp://x"', "must be an http:// or https:// URL"),
        ('url = "http://u:p@x/"', "put credentials in headers_env"),
        ('url = "http://x/"\nconcurrency = 0', "concurrency"),
        ('url = "http://x/"\nhits_path = "a..b"', "is not a path"),
        ('url = "http://x/"\nretry = 3', "unknown key 'retrievers.http.retry'"),
    ],
)
def test_bad_settings_fail_fast_in_one_line(
    tmp_path: Path, tiny: Path, table: str, message: str
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(f"[retrievers.http]\n{table}\n")
    done = run_cli("beir", str(tiny), "--retriever", "http", "--config", str(config))
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.count("\n") == 1


# --- a request body template: Elasticsearch's `_search` shape ------------------------

ES_BODY = '{"size": "$k", "query": {"match": {"text": "$query"}}}'
ES_FILTERED = (
    '{"size": "$k", "query": {"bool": {"must": {"match": {"text": "$query"}}, '
    '"filter": {"terms": {"tags": "$tags"}}}}}'
)


class _SearchApi(http.server.BaseHTTPRequestHandler):
    """Answers `_search` bodies in Elasticsearch's response shape: documents ranked by the
    query words they share, `size` of them."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        query = body["query"]
        text = (
            query["match"]["text"] if "match" in query else query["bool"]["must"]["match"]["text"]
        )
        words = set(text.lower().split())
        scored = sorted(
            (
                (len(words & set(document.lower().split())), doc_id, document)
                for doc_id, document in DOCUMENTS.items()
            ),
            key=lambda item: (-item[0], item[1]),
        )
        hits = [
            {"_id": doc_id, "_score": float(score), "_source": {"text": document}}
            for score, doc_id, document in scored
            if score > 0
        ][: body["size"]]
        answer = json.dumps({"took": 1, "hits": {"total": {"value": len(hits)}, "hits": hits}})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(answer.encode())


def test_a_body_template_speaks_elasticsearchs_search_shape(tmp_path: Path, tiny: Path) -> None:
    _SearchApi.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SearchApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/notes/_search"
        config = _config(
            tmp_path,
            url,
            body=ES_BODY,
            hits_path="hits.hits",
            id_field="_id",
            score_field="_score",
            text_field="_source.text",
        )
        summary = beir_json(tiny, "http", tmp_path / "out.json", config=config)
    finally:
        server.shutdown()
        server.server_close()
    assert {body["query"]["match"]["text"] for body in _SearchApi.bodies} >= {
        "wing flutter",
        "thin shells",
    }
    assert {body["size"] for body in _SearchApi.bodies} == {100}
    assert summary["num_queries"] == 6
    assert summary["ndcg@10"] > 0.5


@given(
    query=st.text(max_size=40),
    k=st.integers(min_value=1, max_value=1000),
    tags=st.lists(st.text(min_size=1, max_size=10), max_size=3),
)
def test_the_template_carries_any_query_and_tags_as_json_values(
    query: str, k: int, tags: list[str]
) -> None:
    from retrieval_eval.retrieval.external.http import request_body
    from retrieval_eval.retrieval.external.services_config import HttpConfig

    config = HttpConfig(url="http://127.0.0.1:9/_search", body=ES_BODY, filtered_body=ES_FILTERED)
    body = json.loads(json.dumps(request_body(config, query, k, tags)))
    assert body["size"] == k
    if tags:
        assert body["query"]["bool"]["must"]["match"]["text"] == query
        assert body["query"]["bool"]["filter"]["terms"]["tags"] == tags
    else:
        assert body["query"]["match"]["text"] == query


def test_a_template_that_would_drop_a_tag_filter_is_refused() -> None:
    from retrieval_eval.errors import ConfigError
    from retrieval_eval.retrieval.external.http import request_body
    from retrieval_eval.retrieval.external.services_config import HttpConfig

    config = HttpConfig(url="http://127.0.0.1:9/_search", body=ES_BODY)
    with pytest.raises(ConfigError, match=r'body has no "\$tags": set filtered_body'):
        request_body(config, "wing", 10, ["aero"])
    with pytest.raises(ValueError, match="must be a JSON object"):
        HttpConfig(url="http://127.0.0.1:9/_search", body='["$query"]')
    with pytest.raises(ValueError, match="filtered_body needs body"):
        HttpConfig(url="http://127.0.0.1:9/_search", filtered_body=ES_FILTERED)
