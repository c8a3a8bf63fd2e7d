"""Data files the tests and benchmarks need, shipped inside the repository."""
