"""Milvus through pymilvus: a server at a URI, or Milvus Lite in a file.

Our collection is indexed FLAT with the cosine metric, so Milvus searches it exactly; a
team's collection is searched through its own index, which ANN fidelity measures unless
that index is FLAT too. Tags are a JSON array in the dynamic fields, filtered with
``json_contains_any``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.external.engine import (
    CHUNK_KEY,
    DOC_KEY,
    TAGS_KEY,
    TEXT_KEY,
    LocalFolder,
    Record,
    unreachable,
)
from retrieval_eval.retrieval.external.engines_config import MilvusConfig

_ID = "id"  # our collection's primary key (the chunk id)
LITE_FILE = "milvus.db"  # Milvus Lite's file in the local folder
_INSERT = 512  # rows per request
_SCAN = 1000  # rows per page when reading every vector back
_TOP_K = 16384  # Milvus's largest limit for one search
_SPACES = {"COSINE": "cosine", "IP": "ip", "L2": "l2"}


class MilvusStore:
    engine = "milvus"

    def __init__(
        self, table: MilvusConfig, local: LocalFolder, uri: str | None, token: str | None
    ) -> None:
        import pymilvus  # here, so a missing package is found when the retriever is built

        self.table = table
        self.label = "retrievers.milvus"
        self.uri = uri
        self.approximate = False
        self.space = "cosine"
        self._module = pymilvus
        self._token = token
        self._local = local
        self._client: Any = None
        self._name = ""
        self._field = table.vector_field
        self._primary = _ID
        self._index = "FLAT"

    @property
    def client(self) -> Any:
        if self._client is None:
            where = self.uri if self.uri is not None else str(self._local.path() / LITE_FILE)
            try:
                self._client = self._module.MilvusClient(
                    uri=where, token=self._token or "", timeout=self.table.timeout_s
                )
            except Exception as error:
                raise unreachable(self.label, where, error, "retrievers.milvus.url") from None
        return self._client

    def _call(self, job: Any) -> Any:
        try:
            return job()
        except ConfigError:
            raise
        except Exception as error:
            if self.uri is None:
                raise
            raise unreachable(self.label, self.uri, error, "retrievers.milvus.url") from None

    def open_ours(self, name: str, dimensions: int, fingerprint: str, count: int) -> bool:
        from pymilvus import DataType

        # Milvus names take letters, digits and underscores only.
        name = name.replace("-", "_")
        self._name = name
        client = self.client
        if self._call(lambda: client.has_collection(name)):
            client.load_collection(name)
            if self._rows() == count:
                return True
            client.drop_collection(name)  # half-built by an interrupted run
        schema = client.create_schema(auto_id=False, enable_dynamic_field=True)
        schema.add_field(_ID, DataType.VARCHAR, is_primary=True, max_length=65535)
        schema.add_field(self._field, DataType.FLOAT_VECTOR, dim=dimensions)
        index = client.prepare_index_params()
        index.add_index(field_name=self._field, index_type="FLAT", metric_type="COSINE")
        self._call(lambda: client.create_collection(name, schema=schema, index_params=index))
        return False

    def _rows(self) -> int:
        found = self.client.query(self._name, filter="", output_fields=["count(*)"])
        return int(found[0]["count(*)"])

    def add(self, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        data = [
            {
                _ID: str(row[CHUNK_KEY]),
                DOC_KEY: str(row[DOC_KEY]),
                TEXT_KEY: str(row[TEXT_KEY]),
                TAGS_KEY: list(row[TAGS_KEY]),
                self._field: vector.tolist(),
            }
            for row, vector in zip(rows, vectors, strict=True)
        ]
        for start in range(0, len(data), _INSERT):
            page = data[start : start + _INSERT]
            self._call(lambda page=page: self.client.insert(self._name, data=page))
        self.client.flush(self._name)

    def open_existing(self, name: str) -> int:
        client = self.client
        if not self._call(lambda: client.has_collection(name)):
            names = sorted(self._call(client.list_collections))
            raise ConfigError(
                f"retrievers.milvus.collection: no collection {name!r} on "
                f"{self.uri or 'Milvus Lite'} (it has: {', '.join(names) if names else 'none'})"
            )
        self._name = name
        described = self._call(lambda: client.describe_collection(name))
        fields = {field["name"]: field for field in described["fields"]}
        field = fields.get(self._field)
        if field is None:
            raise ConfigError(
                f"retrievers.milvus.vector_field: collection {name!r} has no field "
                f"{self._field!r} (its fields: {', '.join(sorted(fields))})"
            )
        self._primary = next((f["name"] for f in described["fields"] if f.get("is_primary")), _ID)
        for index_name in client.list_indexes(name, field_name=self._field):
            index = client.describe_index(name, index_name)
            self._index = str(index.get("index_type", "AUTOINDEX"))
            self.space = _SPACES.get(str(index.get("metric_type", "COSINE")).upper(), "cosine")
            self.approximate = self._index != "FLAT"
        client.load_collection(name)
        return int(field.get("params", {}).get("dim", 0))

    def count(self) -> int:
        return int(self._call(self._rows))

    def search(self, vector: np.ndarray, n: int, tags: Sequence[str]) -> list[Record]:
        where = ""
        if tags:
            key = self.table.tag_key if self.table.index == "existing" else TAGS_KEY
            listed = ", ".join(
                '"' + tag.replace("\\", "\\\\").replace('"', '\\"') + '"' for tag in tags
            )
            where = f"json_contains_any({key}, [{listed}])"
        found = self._call(
            lambda: self.client.search(
                self._name,
                data=[np.asarray(vector, dtype=np.float32).tolist()],
                anns_field=self._field,
                limit=min(n, _TOP_K),
                filter=where,
                output_fields=["*"],
            )
        )[0]
        sign = -1.0 if self.space == "l2" else 1.0
        return [
            Record(
                str(hit["id"]),
                sign * float(hit["distance"]),
                {k: v for k, v in (hit.get("entity") or {}).items() if k != self._field},
            )
            for hit in found
        ]

    def scan(self) -> Iterator[Record]:
        iterator = self._call(
            lambda: self.client.query_iterator(
                self._name, batch_size=_SCAN, filter="", output_fields=["*"]
            )
        )
        try:
            while True:
                page = iterator.next()
                if not page:
                    break
                for row in page:
                    payload = {k: v for k, v in row.items() if k != self._field}
                    yield Record(str(row[self._primary]), 0.0, payload, row[self._field])
        finally:
            iterator.close()

    def describe(self) -> dict[str, object]:
        return {"search": self._index, **({} if self.uri else {"mode": "Milvus Lite"})}

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def remove(self) -> None:
        self.close()
        self._local.remove()
