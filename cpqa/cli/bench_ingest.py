"""Ingestion and local search benchmark (owner: store helper; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def ingest() -> None:
    """Ingestion and local search benchmark"""
    fail("not built yet")
