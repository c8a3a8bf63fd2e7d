"""The retrievers that run inside this process: ``dense``, ``bm25``, ``like`` and ``hybrid``.

Beside them: the keyword tokenizer ``bm25`` and ``like`` share (``tokenizer.py``),
the chunk-to-document rule of the chunked retrievers (``collapse.py``), and the
embedding-cache fill behind ``retrieval-eval embed`` (``embed_shard.py``).
"""
