"""Chunking benchmark (owner: SEOS helper; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def chunking() -> None:
    """Chunking benchmark"""
    fail("not built yet")
