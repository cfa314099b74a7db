"""Local worker processes for evaluation (a ``pebble.ProcessPool``): each episode runs in a child
process, so a hard crash (segfault, out-of-memory kill, ``os._exit``) or a timeout of one video is
recorded as that video's error and the others still run.

Workers are spawned processes (safe with torch/CUDA), not daemons (a model may start processes of its
own), and keep their built model between episodes (weights load once per worker). The pool replaces a
worker that died or was stopped at its episode's timeout; every result, crash or timeout belongs to
exactly one episode: no guessing, no reruns.
"""
from __future__ import annotations

import signal
from concurrent.futures import TimeoutError as FutureTimeout, as_completed
from multiprocessing import get_context
from typing import Any, Callable, Optional, Sequence


Evaluate = Callable[[Any, Any], dict]


def _exit_reason(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def run_in_processes(job: Any, episodes: Sequence[Any], workers: int, evaluate: Evaluate,
                     handle: Callable[[dict], None], crashed: Callable[[Any, str], dict],
                     timeout_s: Optional[float] = None) -> None:
    """Evaluate ``episodes`` on up to ``workers`` child processes, calling ``handle`` with each result
    as it arrives. A worker that dies, or runs one episode longer than ``timeout_s`` seconds (None: no
    limit; counted from the moment a worker takes the episode), yields ``crashed(episode, why)``."""
    import pebble  # a core dependency, imported here to keep `import directme` light
    pool = pebble.ProcessPool(max_workers=max(1, min(workers, len(episodes))), context=get_context("spawn"))
    try:
        futures = {pool.schedule(evaluate, args=(job, ep), timeout=timeout_s): ep for ep in episodes}
        for future in as_completed(futures):
            handle(_outcome(future, futures[future], timeout_s, crashed, pebble.ProcessExpired))
    finally:
        pool.stop()  # the workers end (busy ones too when this ends early: Ctrl-C)
        pool.join(timeout=10)


def _outcome(future: Any, episode: Any, timeout_s: Optional[float], crashed: Callable[[Any, str], dict],
             expired: type) -> dict:
    """The episode's result, or its crash record when the worker died or ran out of time."""
    try:
        return future.result()
    except FutureTimeout:
        return crashed(episode, f"timed out after {timeout_s:g} s (the per-video timeout); its worker was stopped")
    except expired as exc:
        return crashed(episode, f"worker process died ({_exit_reason(exc.exitcode)}: a crash or out of memory) "
                                "on this episode")
    except Exception as exc:  # noqa: BLE001 - e.g. a job that cannot be pickled: that episode's error
        return crashed(episode, f"could not run in a worker process: {type(exc).__name__}: {exc}")
