"""Kill a process while it re-saves an agent over an earlier save: is the save on disk still whole?

    python benchmarks/crash_save.py --trials 100 [--minutes 20] [--seed 0] [--dir DIR]

Builds one agent from a simulator episode (``directme.sim.generate_episode``, oracle perception with
``directme.config.oracle_config()``, 1 fps): the OLD save is ``Agent.save`` of the first half of the stream,
the NEW memory is the whole stream (longer: more frames, objects, keyframes). Each trial writes the old save
to ``DIR/agent`` afresh, forks a child that calls ``new_agent.save(DIR/agent)`` and, once the child says it
starts saving, sends it SIGKILL after a delay drawn uniformly from [0, shortest save time) (the shortest of
``--calibrate`` unkilled saves in forked children, ``save_ms_min``; their median is ``save_ms_median``). Save
times vary with the machine's load (fsync), so some kills land after the child finished:
``finished_before_kill``, the rest ``killed_during_save``). Then ``Agent.load(DIR/agent)`` in this process,
and the trial is classified:

- ``old``: it loads and equals the old save; ``new``: it loads and equals the new memory
  (``loaded_old_or_new`` = old + new);
- ``corrupt``: ``Agent.load`` raised (any exception; the types are counted in ``corrupt_errors``);
- ``mixed``: it loads but equals neither (e.g. the new memory with the old end time).

"Equals" compares a sha256 over everything a load restores: agent.json's times and config, and the
memory's components' states (``to_state`` of the ego log, object store and drift corrector, the place log,
the keyframe images). Prints ``loaded_old_or_new=N corrupt=N mixed=N`` last (target: trials/0/0) and the
wall time.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from directme import Agent
from directme.config import oracle_config
from directme.sim import generate_episode


def fingerprint(agent: Agent) -> str:
    """sha256 of everything Agent.load restores (see the module docstring)."""
    h = hashlib.sha256()
    mem = agent.memory

    def add(obj) -> None:
        h.update(json.dumps(obj, sort_keys=True, default=str).encode())

    def add_arrays(arrays: dict) -> None:
        for k in sorted(arrays):
            a = np.ascontiguousarray(arrays[k])
            add([k, str(a.dtype), list(a.shape)])
            h.update(a.tobytes())

    add([agent._first_t, agent._last_t, agent._last_input_t, agent.config.to_dict()])
    for key, part in mem.parts().items():  # every component's state, as it hands it to a save
        meta, arrays = part.to_state()
        add([key, meta])
        add_arrays(arrays)
    return h.hexdigest()


def build(minutes: float, seed: int, old_dir: Path) -> Agent:
    """The whole stream's agent; the first half's agent is saved to ``old_dir`` on the way."""
    ep = generate_episode(seed=seed, minutes=minutes, with_questions=False)
    agent = Agent(oracle_config(), episode=ep)
    half = ep.n_frames // 2
    for i, frame in enumerate(ep.frames()):
        if i == half:
            agent.flush()
            agent.save(old_dir)
        agent.observe(frame)
    agent.flush()
    return agent


def _child_save(agent: Agent, target: Path, ready, done) -> None:
    ready.send_bytes(b"1")
    t0 = time.perf_counter()
    agent.save(target)
    done.send_bytes(str(time.perf_counter() - t0).encode())


def _clean(target: Path) -> None:
    """Remove the target and any sibling a save left (``.agent.directme-*``)."""
    for p in [target, *target.parent.glob(f".{target.name}.*")]:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.exists() or p.is_symlink():
            p.unlink()


def run_child(ctx, agent: Agent, target: Path, delay_s: float | None) -> tuple[bool, float | None]:
    """Fork a child saving ``agent`` to ``target``; kill it ``delay_s`` after it starts (None: never).
    Returns (whether it had finished before the kill, its save time when it reported one)."""
    r_ready, w_ready = ctx.Pipe(duplex=False)
    r_done, w_done = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child_save, args=(agent, target, w_ready, w_done))
    child.start()
    r_ready.recv_bytes()
    if delay_s is not None:
        time.sleep(delay_s)
        os.kill(child.pid, signal.SIGKILL)
    child.join()
    took = float(r_done.recv_bytes()) if r_done.poll() else None
    for c in (r_ready, w_ready, r_done, w_done):
        c.close()
    return child.exitcode == 0, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--minutes", type=float, default=20.0, help="length of the new memory's stream (old: half)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--calibrate", type=int, default=7, help="unkilled saves timed to draw the kill moments")
    ap.add_argument("--dir", default=None, help="working directory (default: a temporary one on this disk)")
    a = ap.parse_args()
    t_start = time.perf_counter()
    work = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="crash_save_"))
    work.mkdir(parents=True, exist_ok=True)
    ctx = multiprocessing.get_context("fork")
    new_agent = build(a.minutes, a.seed, work / "old_ref")
    old_print = fingerprint(Agent.load(work / "old_ref"))
    _clean(work / "new_ref")
    new_agent.save(work / "new_ref")
    new_print = fingerprint(Agent.load(work / "new_ref"))
    if new_print != fingerprint(new_agent) or new_print == old_print:
        raise SystemExit("the fingerprint does not tell the saves apart or a save does not round-trip")
    target = work / "agent"
    times = []
    for _ in range(a.calibrate):
        _clean(target)
        Agent.load(work / "old_ref").save(target)
        finished, took = run_child(ctx, new_agent, target, None)
        if not finished or took is None:
            raise SystemExit("a save that was not killed failed")
        times.append(took)
    t_save = min(times)
    old_agent = Agent.load(work / "old_ref")
    rng = random.Random(a.seed)
    outcome, errors, finished_n = Counter(), Counter(), 0
    for _ in range(a.trials):
        _clean(target)
        old_agent.save(target)
        finished, _ = run_child(ctx, new_agent, target, rng.uniform(0.0, t_save))
        finished_n += finished
        try:
            loaded = fingerprint(Agent.load(target))
        except Exception as e:  # noqa: BLE001 - every failure to load is a corrupt save here
            outcome["corrupt"] += 1
            errors[type(e).__name__] += 1
            continue
        outcome["old" if loaded == old_print else "new" if loaded == new_print else "mixed"] += 1
    save_mb = sum(p.stat().st_size for p in (work / "new_ref").rglob("*") if p.is_file()) / 1e6
    if not a.dir:
        shutil.rmtree(work)
    print(f"trials={a.trials} minutes={a.minutes:g} save_mb={save_mb:.2f} save_ms_min={1000 * t_save:.1f} "
          f"save_ms_median={1000 * statistics.median(times):.1f} "
          f"killed_during_save={a.trials - finished_n} finished_before_kill={finished_n}")
    print(f"old={outcome['old']} new={outcome['new']} corrupt_errors={dict(errors)}")
    print(f"wall_s={time.perf_counter() - t_start:.1f}")
    print(f"loaded_old_or_new={outcome['old'] + outcome['new']} corrupt={outcome['corrupt']} mixed={outcome['mixed']}")


if __name__ == "__main__":
    main()
