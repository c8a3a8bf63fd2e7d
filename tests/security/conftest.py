from tests.security.harness import repo

__all__ = ["repo"]
