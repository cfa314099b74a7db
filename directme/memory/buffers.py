"""Append-only numpy columns with amortised growth (compact per-observation logs), and the canonical form of
arrays written to a save."""
from __future__ import annotations

import threading
from typing import Mapping, Sequence

import numpy as np


class LockedLazy:
    """A store that computes held work on first read, under ``self._lock`` (several readers may ask at once).

    The lock is not pickled: a copy gets a fresh one."""

    def _init_lock(self) -> None:
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


class GrowArray:
    """An append-only array of rows of shape ``row_shape`` (doubling capacity, views are read-only).

    Rows already written never change, so a view taken at time t stays valid after later appends.
    """

    __slots__ = ("_buf", "_n")

    def __init__(self, dtype, row_shape: Sequence[int] = (), capacity: int = 4) -> None:
        self._buf = np.empty((max(1, capacity), *row_shape), dtype=dtype)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, row) -> None:
        if self._n == len(self._buf):
            grown = np.empty((2 * len(self._buf), *self._buf.shape[1:]), dtype=self._buf.dtype)
            grown[: self._n] = self._buf[: self._n]
            self._buf = grown
        self._buf[self._n] = row
        self._n += 1

    def set(self, i: int, row) -> None:
        """Rewrite row ``i`` (only for a row of the frame being added, never an earlier one)."""
        if not 0 <= i < self._n:
            raise IndexError(i)
        self._buf[i] = row

    def view(self, n: int | None = None) -> np.ndarray:
        """The first ``n`` rows (all by default) as a read-only view."""
        v = self._buf[: self._n if n is None else min(n, self._n)]
        v = v.view()
        v.setflags(write=False)
        return v

    def __getitem__(self, i):
        if isinstance(i, int) and not -self._n <= i < self._n:
            raise IndexError(i)
        return self._buf[: self._n][i]

    def to_array(self) -> np.ndarray:
        return np.array(self._buf[: self._n])

    @staticmethod
    def from_array(a: np.ndarray) -> "GrowArray":
        a = np.asarray(a)
        g = GrowArray(a.dtype, a.shape[1:], capacity=max(4, len(a)))
        g._buf[: len(a)] = a
        g._n = len(a)
        return g


def canonical_nans(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``arrays`` with every NaN of a float array replaced by its dtype's one quiet NaN (other values untouched):
    NaNs arising from different operations differ in their sign and payload bits, and a save must hold the
    same bytes for the same state, so that ``load(save(x))`` gives ``x``'s state bit for bit."""
    out = {}
    for key, a in arrays.items():
        if a.dtype.kind == "f" and a.size:
            nan = np.isnan(a)
            if nan.any():
                a = np.where(nan, a.dtype.type(np.nan), a)
        out[key] = a
    return out
