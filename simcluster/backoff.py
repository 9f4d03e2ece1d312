"""Exponential back-off, capped (a retry count that grows for hours must not overflow: a
pod that never fits is tried again for as long as it waits)."""

from __future__ import annotations


def exponential(first: float, attempt: int, most: float) -> float:
    """`first` doubled `attempt` times (0: `first`; -1: half of it), at most `most`."""
    return min(first * 2.0 ** min(attempt, 60), most)
