"""NCBI's request-rate etiquette (3 requests/s, 10 with an API key), shared by every thread in the process.

Requests are spaced at least ``1/rate`` seconds apart: each caller reserves the next free slot under a
lock and sleeps outside it, then checks the last actual send (a late-waking thread waits its turn again), so N
threads never send more than ``rate`` requests in any one-second window and none of them holds the lock while
waiting. ``shared_limiter(key, rate)`` hands out one limiter per
key (the E-utilities base URL), so every client talking to the same server shares the budget.
"""

from __future__ import annotations

import threading
import time


# Calls are spaced 5% wider than 1/rate: network jitter bunches arrivals, and NCBI counts what it receives
# in any one-second window.
SAFETY_MARGIN = 1.05


class RateLimiter:
    """Spaces calls to ``acquire`` at least ``1.05/rate_per_s`` seconds apart; a rate of 0 means no limit."""

    def __init__(self, rate_per_s: float):
        if rate_per_s < 0:
            raise ValueError(f"rate_per_s must be >= 0, got {rate_per_s}")
        self.rate_per_s = float(rate_per_s)
        self._lock = threading.Lock()
        self._next_slot = 0.0
        self._last_send = float("-inf")

    @property
    def interval(self) -> float:
        return SAFETY_MARGIN / self.rate_per_s if self.rate_per_s else 0.0

    def reserve(self) -> float:
        """Claim the next send slot; returns how many seconds the caller must wait before sending."""
        if not self.rate_per_s:
            return 0.0
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self.interval
            return slot - now

    def acquire(self) -> float:
        """Block until this caller may send; returns the seconds waited.

        After its reserved slot the caller also checks the last actual send: a thread that woke late (busy cores)
        must not send right behind one that sent on time, so sends stay ``interval`` apart as they leave."""
        waited = self.reserve()
        if waited > 0:
            time.sleep(waited)
        if not self.rate_per_s:
            return waited
        while True:
            with self._lock:
                now = time.monotonic()
                gap = self._last_send + self.interval - now
                if gap <= 0:
                    self._last_send = now
                    self._next_slot = max(self._next_slot, now + self.interval)
                    return waited
            time.sleep(gap)
            waited += gap


_registry: dict[str, RateLimiter] = {}
_registry_lock = threading.Lock()


def shared_limiter(key: str, rate_per_s: float) -> RateLimiter:
    """The process-wide limiter for ``key``; a request for a stricter rate tightens the shared one."""
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = _registry[key] = RateLimiter(rate_per_s)
        elif rate_per_s and (not limiter.rate_per_s or rate_per_s < limiter.rate_per_s):
            with limiter._lock:
                limiter.rate_per_s = float(rate_per_s)
        return limiter
