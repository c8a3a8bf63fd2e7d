"""The rerank stage of ``hybrid``: reorder the fused top ``rerank_depth`` documents."""
