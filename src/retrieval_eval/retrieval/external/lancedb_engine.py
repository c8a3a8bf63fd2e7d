"""LanceDB, embedded: a folder under the run's cache folder, or a URI (object storage,
LanceDB Cloud).

Our table has no vector index, so LanceDB searches it exactly (a flat scan, cosine
distance); a team's table is searched through whatever index it has, which ANN fidelity
measures when the table has one. Tags are a list column, filtered before the search
(``array_has_any``) so a filter never empties a top k found without it.
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
from retrieval_eval.retrieval.external.engines_config import LanceDbConfig

_ID = "id"  # our table's record id column (the chunk id)
_SCAN = 4096  # rows per batch when reading every vector back
# LanceDB's distance types → ExactRecords' spaces, and each distance as a score.
_SPACES = {"cosine": "cosine", "dot": "ip", "l2": "l2"}


class LanceDbStore:
    engine = "lancedb"

    def __init__(
        self, table: LanceDbConfig, local: LocalFolder, uri: str | None, key: str | None
    ) -> None:
        import lancedb  # here, so a missing package is found when the retriever is built

        self.table = table
        self.label = "retrievers.lancedb"
        self.uri = uri
        self.approximate = False
        self.space = "cosine"
        self._module = lancedb
        self._key = key
        self._local = local
        self._db: Any = None
        self._table: Any = None
        self._column = table.vector_column
        self._search = "exact"

    def _where(self) -> str:
        return self.uri or str(self._local.path())

    def _connect(self) -> Any:
        if self._db is None:
            where = self.uri if self.uri is not None else str(self._local.path())
            try:
                self._db = self._module.connect(where, api_key=self._key)
            except Exception as error:
                raise unreachable(self.label, where, error, "retrievers.lancedb.url") from None
        return self._db

    def _call(self, job: Any) -> Any:
        try:
            return job()
        except ConfigError:
            raise
        except Exception as error:
            if self.uri is None:
                raise
            raise unreachable(self.label, self.uri, error, "retrievers.lancedb.url") from None

    def _names(self) -> list[str]:
        db = self._connect()
        listed = self._call(db.list_tables) if hasattr(db, "list_tables") else db.table_names()
        names = getattr(listed, "tables", listed)
        return sorted(str(name) for name in names)

    def open_ours(self, name: str, dimensions: int, fingerprint: str, count: int) -> bool:
        import pyarrow as pa

        db = self._connect()
        if name in self._names():
            table = self._call(lambda: db.open_table(name))
            if table.count_rows() == count:
                self._table = table
                return True
            db.drop_table(name)  # half-built by an interrupted run
        schema = pa.schema(
            [
                pa.field(_ID, pa.string()),
                pa.field(DOC_KEY, pa.string()),
                pa.field(TEXT_KEY, pa.string()),
                pa.field(TAGS_KEY, pa.list_(pa.string())),
                pa.field(self._column, pa.list_(pa.float32(), dimensions)),
            ]
        )
        self._table = self._call(lambda: db.create_table(name, schema=schema))
        return False

    def add(self, rows: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        data = [
            {
                _ID: str(row[CHUNK_KEY]),
                DOC_KEY: str(row[DOC_KEY]),
                TEXT_KEY: str(row[TEXT_KEY]),
                TAGS_KEY: list(row[TAGS_KEY]),
                self._column: vector.tolist(),
            }
            for row, vector in zip(rows, vectors, strict=True)
        ]
        self._call(lambda: self._table.add(data))

    def open_existing(self, name: str) -> int:
        import pyarrow as pa

        names = self._names()
        if name not in names:
            raise ConfigError(
                f"retrievers.lancedb.collection: no table {name!r} in {self._where()} "
                f"(it has: {', '.join(names) if names else 'none'})"
            )
        self._table = self._call(lambda: self._connect().open_table(name))
        schema = self._table.schema
        if self._column not in schema.names:
            raise ConfigError(
                f"retrievers.lancedb.vector_column: table {name!r} has no column "
                f"{self._column!r} (its columns: {', '.join(schema.names)})"
            )
        if self.table.id_key is None and _ID not in schema.names:
            raise ConfigError(
                f"retrievers.lancedb.id_key: table {name!r} has no {_ID!r} column; set id_key "
                f"to the column holding the document id (its columns: {', '.join(schema.names)})"
            )
        kind = schema.field(self._column).type
        if not pa.types.is_fixed_size_list(kind):
            raise ConfigError(
                f"retrievers.lancedb.vector_column: {self._column!r} in {name!r} is {kind}, "
                "not a fixed-size list of floats (a vector column)"
            )
        self.space = "cosine"
        indices = [
            index
            for index in self._table.list_indices()
            if self._column in list(getattr(index, "columns", []))
        ]
        if indices:
            self.approximate = True
            self._search = str(getattr(indices[0], "index_type", "ANN"))
            metric = str(getattr(indices[0], "distance_type", "") or "cosine").lower()
            self.space = _SPACES.get(metric, "cosine")
        return int(kind.list_size)

    def count(self) -> int:
        return int(self._call(self._table.count_rows))

    def search(self, vector: np.ndarray, n: int, tags: Sequence[str]) -> list[Record]:
        distance = {v: k for k, v in _SPACES.items()}[self.space]
        query = (
            self._table.search(
                np.asarray(vector, dtype=np.float32), vector_column_name=self._column
            )
            .distance_type(distance)
            .limit(n)
        )
        if tags:
            key = self.table.tag_key if self.table.index == "existing" else TAGS_KEY
            listed = ", ".join("'" + tag.replace("'", "''") + "'" for tag in tags)
            query = query.where(f"array_has_any({_quoted(key)}, [{listed}])", prefilter=True)
        rows = self._call(query.to_list)
        return [self._record(row, -float(row["_distance"])) for row in rows]

    def _record(self, row: Mapping[str, Any], score: float) -> Record:
        payload = {
            key: value
            for key, value in row.items()
            if key not in (self._column, "_distance", "_rowid")
        }
        if self.space == "cosine":
            score = 1.0 + score  # cosine distance is 1 − similarity
        record_id = payload.get(_ID, payload.get("_rowid", ""))
        return Record(str(record_id), score, payload, row.get(self._column))

    def scan(self) -> Iterator[Record]:
        for batch in self._call(self._table.to_arrow).to_batches(max_chunksize=_SCAN):
            for row in batch.to_pylist():
                yield self._record(row, 0.0)

    def describe(self) -> dict[str, object]:
        return {"search": self._search}

    def close(self) -> None:
        self._table = None
        self._db = None

    def remove(self) -> None:
        self.close()
        self._local.remove()


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"
