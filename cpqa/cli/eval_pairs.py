"""Embedding x reranker pairing experiment (owner: evaluation helper; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def pairs() -> None:
    """Embedding x reranker pairing experiment"""
    fail("not built yet")
