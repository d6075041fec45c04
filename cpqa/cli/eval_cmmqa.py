"""CMMQA evaluation (owner: evaluation helper; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def cmmqa() -> None:
    """CMMQA evaluation"""
    fail("not built yet")
