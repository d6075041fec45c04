"""Vector index scale benchmark (owner: vector index helper; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def index() -> None:
    """Vector index scale benchmark"""
    fail("not built yet")
