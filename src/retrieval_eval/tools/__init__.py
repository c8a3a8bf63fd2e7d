"""Programs of their own beside the run, each behind its own command (``trec``)."""
