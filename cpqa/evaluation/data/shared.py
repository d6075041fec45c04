"""Where the evaluation's default data sits: ``../shared/data`` beside the checkout (never copied into it)."""

from __future__ import annotations

from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
