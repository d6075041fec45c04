"""The ``cpqa`` command (``cpqa.cli.command``). ``app`` and ``main`` load on first use, so a command group's module can
import the shared helpers (``cpqa.cli.common``) without building the whole command, whose groups from outside the
product (ingestion, the evaluation) arrive through entry points that import those modules in turn."""

from __future__ import annotations

from typing import Any

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from cpqa.cli import command as module

        return module.app if name == "app" else module.main
    raise AttributeError(f"module 'cpqa.cli' has no attribute {name!r}")
