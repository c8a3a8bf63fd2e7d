"""TREC text files (runs, qrels) read in numpy: what `trec` and the `run-file` retriever share."""
