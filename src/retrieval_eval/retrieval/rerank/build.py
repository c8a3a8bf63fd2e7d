"""``[retrievers.hybrid] reranker = ...`` → a reranker, the one place that name is resolved."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.config import HybridConfig
from retrieval_eval.retrieval.rerank.base import Reranker


def build_reranker(
    config: HybridConfig, *, anthropic_api_key: str | None, cache_dir: Path | None = None
) -> Reranker | None:
    """None for ``reranker = "none"``. ``cache_dir`` is where the Claude reranker keeps
    its answers when ``[retrievers.hybrid.claude] cache_dir`` is not set."""
    if config.reranker == "none":
        return None
    if config.reranker == "custom":
        from retrieval_eval.retrieval.rerank.custom import build_custom_reranker

        assert config.custom is not None  # HybridConfig guarantees it
        return build_custom_reranker(config.custom)
    if not anthropic_api_key:
        raise ConfigError(
            'reranker = "claude" needs an API key: set the ANTHROPIC_API_KEY environment '
            'variable, or choose another reranker ([retrievers.hybrid] reranker = "none")'
        )
    # Imported here: anthropic takes about a second to import, and only this reranker needs it.
    import anthropic

    from retrieval_eval.retrieval.rerank.claude import ClaudeReranker

    claude = config.claude
    client = anthropic.Anthropic(
        api_key=anthropic_api_key,
        base_url=claude.base_url,
        max_retries=claude.max_retries,
        timeout=claude.timeout_s,
    )
    return ClaudeReranker(
        client, claude, cache_dir=claude.cache_dir if claude.cache_dir is not None else cache_dir
    )
