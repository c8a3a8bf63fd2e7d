"""Authoring tools at the edge: `init` scaffolds a repository, `generate` writes synthetic
golden fixtures with Claude, `review` turns them into human-annotated ones."""
