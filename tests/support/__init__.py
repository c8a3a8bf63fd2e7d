"""Reusable test doubles that are real servers (never mocks), shared by test packages."""
