"""Answer a question with cited evidence (owner: pipeline helper; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def ask() -> None:
    """Answer a question with cited evidence"""
    fail("not built yet")
