"""Use cases: each module composes the stages for one thing a user does."""
