"""Local worker processes for evaluation: each episode runs in a child process, so a hard
crash (segfault, out-of-memory kill, ``os._exit``) of one video is recorded as that video's
error and the others still run.

Each worker is a spawned process (safe with torch/CUDA) that evaluates one episode at a time
and keeps its built model between episodes (weights load once per worker). The parent knows
which episode every worker holds, so a dead worker names exactly one culprit: no guessing,
no reruns. A replacement worker is started for the episodes left.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Optional, Sequence

Evaluate = Callable[[Any, Any], dict]


def _serve(conn: Connection, evaluate: Evaluate) -> None:
    """Worker loop: receive ``(job, episode)``, send back ``evaluate(job, episode)``; None stops."""
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        conn.send(evaluate(*task))


@dataclass
class _Worker:
    process: Any
    conn: Connection
    episode: Any = None  # the episode it is working on, None when idle


def _exit_reason(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def run_in_processes(job: Any, episodes: Sequence[Any], workers: int, evaluate: Evaluate,
                     handle: Callable[[dict], None], crashed: Callable[[Any, str], dict]) -> None:
    """Evaluate ``episodes`` on up to ``workers`` child processes, calling ``handle`` with each
    result as it arrives; a worker that dies yields ``crashed(episode, why)`` for its episode."""
    ctx = get_context("spawn")
    queue = list(episodes)[::-1]  # pop() from the end keeps the given order
    pool: list[_Worker] = []

    def start() -> _Worker:
        parent, child = ctx.Pipe()
        # not a daemon: a model may start processes of its own; a worker whose parent is gone
        # reads EOF on its pipe and exits
        proc = ctx.Process(target=_serve, args=(child, evaluate))
        proc.start()
        child.close()
        return _Worker(proc, parent)

    try:
        while queue or any(w.episode is not None for w in pool):
            idle = sum(w.episode is None for w in pool)
            while idle < len(queue) and len(pool) < max(1, workers):
                pool.append(start())
                idle += 1
            for w in pool:
                if w.episode is None and queue:
                    w.episode = queue.pop()
                    w.conn.send((job, w.episode))
            busy = [w for w in pool if w.episode is not None]
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
            for w in busy:
                if w.conn not in ready and w.process.sentinel not in ready:
                    continue
                _collect(w, handle, crashed)
            for w in [w for w in pool if w.episode is None and not w.process.is_alive()]:
                _stop(w)  # died (or was stopped) between episodes: replaced on the next round
                pool.remove(w)
    finally:
        for w in pool:
            _stop(w)


def _collect(w: _Worker, handle: Callable[[dict], None], crashed: Callable[[Any, str], dict]) -> None:
    """The result of ``w``'s episode, or its crash record when the process died without one."""
    episode = w.episode
    result: Optional[dict] = None
    try:
        if w.conn.poll():
            result = w.conn.recv()
    except (EOFError, OSError):
        result = None
    if result is None:
        w.process.join(timeout=5)
        why = _exit_reason(w.process.exitcode)
        result = crashed(episode, f"worker process died ({why}: a crash or out of memory) on this episode")
        _stop(w)
    w.episode = None
    handle(result)


def _stop(w: _Worker) -> None:
    try:
        if w.process.is_alive() and w.episode is None:
            w.conn.send(None)
            w.process.join(timeout=5)
    except (OSError, BrokenPipeError):
        pass
    if w.process.is_alive():
        w.process.terminate()
        w.process.join(timeout=5)
    w.conn.close()
