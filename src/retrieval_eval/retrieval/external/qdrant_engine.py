"""Qdrant through qdrant-client: a server at a URL, or local mode in a folder.

Local mode (no ``url``) keeps the collection in a folder under the run's cache folder and
searches it exactly; a server searches its HNSW index, which ANN fidelity measures. Point
ids are UUIDs made from the chunk id (Qdrant takes only integers and UUIDs), the chunk id
itself in the payload.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.external.engine import CHUNK_KEY, LocalFolder, Record, unreachable
from retrieval_eval.retrieval.external.engines_config import QdrantConfig

_UPSERT = 256  # points per request
_SCROLL = 1000  # points per page when reading every vector back
_SPACES = {"Cosine": "cosine", "Dot": "ip", "Euclid": "l2"}


class QdrantStore:
    engine = "qdrant"

    def __init__(self, table: QdrantConfig, local: LocalFolder, url: str | None, key: str | None):
        import qdrant_client  # here, so a missing package is found when the retriever is built

        self.table = table
        self.label = "retrievers.qdrant"
        self.url = url
        self.approximate = url is not None
        self.space = "cosine"
        self._module = qdrant_client
        self._key = key
        self._local = local
        self._client: Any = None
        self._name = ""
        self._vector_name: str | None = table.vector_name

    @property
    def client(self) -> Any:
        if self._client is not None:
            return self._client
        if self.url is not None:
            self._client = self._module.QdrantClient(
                url=self.url, api_key=self._key, timeout=int(self.table.timeout_s)
            )
        else:
            path = self._local.path()
            try:
                self._client = self._module.QdrantClient(path=str(path))
            except RuntimeError as error:  # the folder is locked by another client
                raise ConfigError(f"{self.label}: local folder {path}: {error}") from None
        return self._client

    def _where(self) -> str:
        return self.url or "local mode"

    def _call(self, job: Any, setting: str = "retrievers.qdrant.url") -> Any:
        try:
            return job()
        except ConfigError:
            raise
        except Exception as error:
            if self.url is None:
                raise
            raise unreachable(self.label, self.url, error, setting) from None

    def open_ours(self, name: str, dimensions: int, fingerprint: str, count: int) -> bool:
        from qdrant_client import models

        self._name = name
        if self._call(lambda: self.client.collection_exists(name)):
            points = self._call(lambda: self.client.count(name, exact=True)).count
            if points == count:
                return True
            self.client.delete_collection(name)  # half-built by an interrupted run
        self._call(
            lambda: self.client.create_collection(
                name,
                vectors_config=models.VectorParams(
                    size=dimensions, distance=models.Distance.COSINE
                ),
            )
        )
        if self.url is not None:  # local mode filters by scanning; a server by this index
            self.client.create_payload_index(name, "tags", models.PayloadSchemaType.KEYWORD)
        return False

    def add(self, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        from qdrant_client import models

        for start in range(0, len(rows), _UPSERT):
            points = [
                models.PointStruct(
                    id=str(uuid.uuid5(uuid.NAMESPACE_URL, str(row[CHUNK_KEY]))),
                    vector=vector.tolist(),
                    payload=dict(row),
                )
                for row, vector in zip(
                    rows[start : start + _UPSERT], vectors[start : start + _UPSERT], strict=True
                )
            ]
            self._call(lambda points=points: self.client.upsert(self._name, points=points))

    def open_existing(self, name: str) -> int:
        self._name = name
        if not self._call(lambda: self.client.collection_exists(name)):
            names = sorted(c.name for c in self.client.get_collections().collections)
            raise ConfigError(
                f"retrievers.qdrant.collection: no collection {name!r} on {self._where()} "
                f"(it has: {', '.join(names) if names else 'none'})"
            )
        info = self.client.get_collection(name)
        vectors = info.config.params.vectors
        if isinstance(vectors, Mapping):
            if self._vector_name is None:
                if len(vectors) != 1:
                    raise ConfigError(
                        f"retrievers.qdrant.vector_name: collection {name!r} has the named "
                        f"vectors {', '.join(sorted(vectors))}; set vector_name to the one to "
                        "search"
                    )
                self._vector_name = next(iter(vectors))
            if self._vector_name not in vectors:
                raise ConfigError(
                    f"retrievers.qdrant.vector_name: collection {name!r} has no vector "
                    f"{self._vector_name!r} (it has: {', '.join(sorted(vectors))})"
                )
            params = vectors[self._vector_name]
        else:
            params = vectors
        distance = str(getattr(params.distance, "value", params.distance))
        if distance not in _SPACES:
            raise ConfigError(
                f"retrievers.qdrant.collection {name!r} uses the {distance} distance; "
                "cosine, dot and euclid are supported"
            )
        self.space = _SPACES[distance]
        return int(params.size)

    def count(self) -> int:
        return int(self._call(lambda: self.client.count(self._name, exact=True)).count)

    def search(self, vector: np.ndarray, n: int, tags: Sequence[str]) -> list[Record]:
        from qdrant_client import models

        where = None
        if tags:
            key = self.table.tag_key if self.table.index == "existing" else "tags"
            where = models.Filter(
                must=[models.FieldCondition(key=key, match=models.MatchAny(any=list(tags)))]
            )
        found = self._call(
            lambda: self.client.query_points(
                self._name,
                query=np.asarray(vector, dtype=np.float32).tolist(),
                using=self._vector_name,
                limit=n,
                query_filter=where,
                with_payload=True,
            )
        ).points
        sign = -1.0 if self.space == "l2" else 1.0
        return [Record(str(p.id), sign * float(p.score), p.payload or {}) for p in found]

    def scan(self) -> Iterator[Record]:
        offset = None
        while True:
            points, offset = self._call(
                lambda offset=offset: self.client.scroll(
                    self._name,
                    limit=_SCROLL,
                    offset=offset,
                    with_payload=True,
                    with_vectors=True,
                )
            )
            for point in points:
                vector = point.vector
                if isinstance(vector, Mapping):
                    vector = vector[self._vector_name]
                yield Record(str(point.id), 0.0, point.payload or {}, vector)
            if offset is None:
                break

    def describe(self) -> dict[str, object]:
        described: dict[str, object] = {"search": "HNSW" if self.approximate else "exact"}
        if self.url is None:
            described["mode"] = "local"
        if self._vector_name is not None:
            described["vector_name"] = self._vector_name
        return described

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def remove(self) -> None:
        self.close()
        self._local.remove()
