"""trec_eval-compatible scoring of run and qrels files (``retrieval-eval trec``)."""
