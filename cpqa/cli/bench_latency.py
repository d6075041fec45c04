"""Per-stage latency benchmark (owner: pipeline helper; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def latency() -> None:
    """Per-stage latency benchmark"""
    fail("not built yet")
