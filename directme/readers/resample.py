"""Resample a timestamped stream to a target rate, keeping each kept frame's exact timestamp."""
from __future__ import annotations

from typing import Iterable, Iterator, Optional, Sequence, TypeVar

import numpy as np

from ..errors import InvalidInputError

T = TypeVar("T")


class RateSampler:
    """Causal selector: keep the first frame at or after each tick t0 + k / fps.

    ``fps=None`` (or 0) keeps every frame. The kept frame keeps its own source timestamp,
    so timestamps are exact (never rounded to the grid). Non-increasing input times raise.
    """

    def __init__(self, fps: Optional[float] = 1.0, tol_s: float = 1e-6):
        if fps is not None and fps < 0:
            raise InvalidInputError(f"fps must be > 0 (or None for every frame), got {fps}")
        self.period_s = 1.0 / fps if fps else 0.0
        self.tol_s = tol_s
        self._next_s: Optional[float] = None
        self._last_s: Optional[float] = None

    def keep(self, t_s: float, where: str = "") -> bool:
        if self._last_s is not None and t_s <= self._last_s:
            raise InvalidInputError(f"{where or 'stream'}: timestamp {t_s:.6f}s is not after {self._last_s:.6f}s; "
                                    "frames must be in increasing time order")
        self._last_s = t_s
        if self.period_s == 0.0:
            return True
        if self._next_s is None:
            self._next_s = t_s
        if t_s + self.tol_s < self._next_s:
            return False
        while self._next_s <= t_s + self.tol_s:
            self._next_s += self.period_s
        return True


def resample(items: Iterable[tuple[float, T]], fps: Optional[float]) -> Iterator[tuple[float, T]]:
    """Yield the (t_s, item) pairs kept by a RateSampler at ``fps``."""
    sampler = RateSampler(fps)
    for t_s, item in items:
        if sampler.keep(t_s):
            yield t_s, item


def count_kept(times_s: Sequence[float], fps: Optional[float], tol_s: float = 1e-6) -> int:
    """How many of the increasing ``times_s`` a RateSampler at ``fps`` keeps, without a Python loop.

    Frame i is kept when a tick t0 + k / fps (accumulated as the sampler does) lies in
    (t[i-1] + tol, t[i] + tol]; used to estimate the frames a reader yields (progress bar ETA)."""
    t = np.asarray(times_s, dtype=np.float64)
    if len(t) == 0 or not fps:
        return int(len(t))
    n_ticks = int(np.floor((t[-1] - t[0] + tol_s) * fps)) + 2
    ticks = np.add.accumulate(np.concatenate(([t[0]], np.full(n_ticks - 1, 1.0 / fps))))
    first = np.searchsorted(t + tol_s, ticks, side="left")
    return int(len(np.unique(first[first < len(t)])))
