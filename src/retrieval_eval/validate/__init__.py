"""Validation of golden datasets: every problem, each as ``FILE:LINE: message``."""

from retrieval_eval.validate.problems import Problem
from retrieval_eval.validate.report import ValidationReport, validate_datasets

__all__ = ["Problem", "ValidationReport", "validate_datasets"]
