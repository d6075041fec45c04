"""Something a long-running process waits for a background job to build (``./setup.sh`` builds the patient index and
the patient sentence vectors after it returns): looked for again at most once a minute until it is there, so a
server or app started early uses it without a restart."""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, TypeVar

T = TypeVar("T")
LOOK_EVERY_S = 60.0


class LookedFor(Generic[T]):
    """``get()``: what ``find`` returns, once it returns something (then kept); while it returns None, ``find`` runs
    again only after ``every`` seconds. Thread-safe."""

    def __init__(self, find: Callable[[], T | None], every: float = LOOK_EVERY_S):
        self._find, self._every = find, every
        self._found: T | None = None
        self._next_look = 0.0
        self._lock = threading.Lock()

    def get(self) -> T | None:
        with self._lock:
            if self._found is None and time.monotonic() >= self._next_look:
                self._found = self._find()
                if self._found is None:
                    self._next_look = time.monotonic() + self._every
            return self._found

    def set(self, found: T) -> None:
        with self._lock:
            self._found = found


__all__ = ["LookedFor", "LOOK_EVERY_S"]
