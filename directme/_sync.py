"""A reader-writer lock (``threading.Condition`` style) and method decorators for ``Agent``.

Written here rather than taken from a library: the maintained ones checked (fasteners 0.20's
``ReaderWriterLock``, readerwriterlock 1.0.x) leave the lock wedged when a wait is interrupted. A
KeyboardInterrupt (Ctrl-C in a notebook) while ``observe()`` waits for an ``ask()`` leaves fasteners'
interrupted thread queued as a pending writer, so every later reader blocks forever (tried: the next
reader never gets the lock); readerwriterlock is also not re-entrant. This lock undoes its bookkeeping in
``finally``, so an interrupted wait leaves it as if the waiter had never come.
"""
from __future__ import annotations

import functools
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TypeVar

F = TypeVar("F", bound=Callable)


class ReadWriteLock:
    """Many readers or one writer, phase-fair: once a writer waits, readers arriving later wait behind it
    (a loop of questions cannot starve ``observe()``), and the readers waiting when a writer leaves go in
    before the next writer (a stream of frames cannot starve ``ask()``).

    Re-entrant: the writer may take the write or the read lock again; a reader may read again. A reader
    asking for the write lock gets RuntimeError (it would wait for itself forever)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers: dict[int, int] = {}  # thread id -> read depth
        self._writer: Optional[int] = None
        self._writer_depth = 0
        self._waiting_writers = 0
        self._waiting_readers = 0
        self._read_turn = 0  # readers admitted before any waiting writer (those waiting when a writer left)

    # ------------------------------------------------------------------ shared side
    def acquire_read(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me or me in self._readers:  # re-entry never waits (it would deadlock)
                self._readers[me] = self._readers.get(me, 0) + 1
                return
            self._waiting_readers += 1
            try:
                while self._writer is not None or (self._waiting_writers and not self._read_turn):
                    self._cond.wait()
            except BaseException:  # interrupted: no turn is owed to a reader gone
                self._waiting_readers -= 1
                self._read_turn = min(self._read_turn, self._waiting_readers)
                self._cond.notify_all()
                raise
            self._waiting_readers -= 1
            if self._read_turn:
                self._read_turn -= 1
            self._readers[me] = 1

    def release_read(self) -> None:
        me = threading.get_ident()
        with self._cond:
            depth = self._readers.get(me, 0)
            if depth <= 0:
                raise RuntimeError("release_read() by a thread that holds no read lock")
            if depth == 1:
                del self._readers[me]
            else:
                self._readers[me] = depth - 1
            if not self._readers:
                self._cond.notify_all()

    # ------------------------------------------------------------------ exclusive side
    def acquire_write(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._writer_depth += 1
                return
            if me in self._readers:
                raise RuntimeError("a thread holding the read lock asked for the write lock: it would wait for "
                                   "itself forever (release the read lock first)")
            self._waiting_writers += 1
            try:
                while self._writer is not None or self._readers or self._read_turn:
                    self._cond.wait()
            except BaseException:
                # interrupted: readers held back for this writer may go on; no turn is owed to readers gone
                self._read_turn = min(self._read_turn, self._waiting_readers)
                self._cond.notify_all()
                raise
            finally:
                self._waiting_writers -= 1
            self._writer, self._writer_depth = me, 1

    def release_write(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer != me:
                raise RuntimeError("release_write() by a thread that does not hold the write lock")
            self._writer_depth -= 1
            if self._writer_depth:
                return
            self._writer = None
            self._read_turn = self._waiting_readers  # the readers waiting now go before the next writer
            self._cond.notify_all()

    # ------------------------------------------------------------------ context managers
    @contextmanager
    def read(self) -> Iterator[None]:
        self.acquire_read()
        try:
            yield
        finally:
            self.release_read()

    @contextmanager
    def write(self) -> Iterator[None]:
        self.acquire_write()
        try:
            yield
        finally:
            self.release_write()


def exclusive(method: F) -> F:
    """Run ``method`` holding ``self._rwlock`` for writing (nothing else runs on that object meanwhile)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._rwlock.write():
            return method(self, *args, **kwargs)
    return wrapper  # type: ignore[return-value]


def shared(method: F) -> F:
    """Run ``method`` holding ``self._rwlock`` for reading (other readers may run, no writer)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self._rwlock.read():
            return method(self, *args, **kwargs)
    return wrapper  # type: ignore[return-value]


def guarded(lock_attr: str) -> Callable[[F], F]:
    """Run the method holding the plain lock ``getattr(self, lock_attr)`` (e.g. a lazily built component)."""
    def decorate(method: F) -> F:
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            with getattr(self, lock_attr):
                return method(self, *args, **kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate
