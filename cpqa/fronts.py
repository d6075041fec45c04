"""A package's front, loaded lazily: its public names, each imported from the module that defines it on first use,
so importing one module of a stage never loads the whole stage (and no package import can loop)."""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable, Mapping


def lazy_front(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``exports`` maps each public name to the module defining it."""
    namespace = import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(exports[name]), name)
        namespace[name] = value  # the next access skips this function
        return value

    return __getattr__
