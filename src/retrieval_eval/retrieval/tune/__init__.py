"""What ``retrieval-eval tune`` needs: the parameter grid (``grid.py``) and each
hybrid side's runs retrieved once and re-fused per setting (``cached_runs.py``)."""
