"""Document retrieval evaluation (E1, E2, HSRDR) (owner: rewrite/HSRDR helpers; being built)."""

from __future__ import annotations

from cpqa.cli.common import fail


def retrieval() -> None:
    """Document retrieval evaluation (E1, E2, HSRDR)"""
    fail("not built yet")
