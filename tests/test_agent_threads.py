"""Agent from several threads: observe + save + two askers at once leave exactly the memory a single-threaded
replay builds, every ask answers or raises a clear error, and a save taken mid-stream is a consistent prefix.
Also the reader-writer lock itself (directme/_sync.py): exclusion, fairness, re-entry, interrupted waits.

DIRECTME_THREAD_RUNS=20 repeats the stress test 20 times in one pytest run."""
from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time

import pytest

from directme import Agent
from directme._sync import ReadWriteLock
from directme.errors import InvalidInputError
from directme.geometry import Intrinsics
from directme.memory import SpatialMemory
from directme.memory.testing import Box, look_at, orbit, perceive, snapshot_facts
from directme.types import Answer

MUG = Box(1, "mug", (0.3, 0.0, 0.06), (0.15, 0.15, 0.15))
BOOK = Box(2, "book", (-0.4, 0.2, 0.03), (0.3, 0.4, 0.06))
CHAIR = Box(3, "chair", (0.5, -0.9, 0.4), (0.5, 0.5, 0.8))
SIZE = (64, 48)
CONFIG = {"query": {"embedder": "string"}, "answerer": {"name": "geometric"}}
QUESTIONS = (("Where is the mug?", None), ("How many chairs did I see?", None),
             ("Where is the book now?", ("in front of you", "behind you", "to your left", "to your right")),
             ("Did the mug move?", ("yes", "no")))


def _segments():
    """A kitchen orbit with a mug and a book, the same with the mug moved and the book gone, a corridor."""
    moved = dataclasses.replace(MUG, centre_w=(-0.5, -0.5, 0.06))
    K = Intrinsics.from_fov(SIZE[0], SIZE[1], 70.0)
    a = list(orbit([MUG, BOOK, CHAIR], 16, size=SIZE, radius=2.0, scene_tag="kitchen"))
    b = list(orbit([moved, CHAIR], 16, size=SIZE, radius=2.0, scene_tag="kitchen"))
    corridor = [perceive([moved, CHAIR], look_at((8.0, 0.0, 1.6), (8.0, 6.0, 1.2)), K, 0.0, 0, "corridor")] * 4
    return a + b + corridor


def stream(n: int, dt: float = 0.25):
    """``n`` frames cycling the segments, re-timed every ``dt`` s (objects move back and forth, rooms change)."""
    base = _segments()
    out = []
    for k in range(n):
        fp = base[k % len(base)]
        out.append(dataclasses.replace(fp, frame=dataclasses.replace(fp.frame, t_s=k * dt, index=k)))
    return out


@pytest.fixture(scope="module")
def frames():
    return stream(1200)


@pytest.fixture(scope="module")
def replay(frames):
    mem = SpatialMemory(Agent(CONFIG).config.memory)
    mem.update_many(frames)
    return mem


@pytest.fixture
def fast_switching():
    """Switch threads every 10 us (default 5 ms) so the threads really interleave inside the methods."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def _times(frames, k=7):
    last = frames[-1].t_s
    return [0.0, 0.1] + [last * i / (k - 1) for i in range(1, k)] + [last + 0.0]


@pytest.mark.slow
@pytest.mark.parametrize("run", range(int(os.environ.get("DIRECTME_THREAD_RUNS", "1"))))
def test_observe_save_and_two_askers_in_threads_equal_a_replay(frames, replay, tmp_path, fast_switching, run):
    agent = Agent(CONFIG)
    done = threading.Event()
    failures: list[BaseException] = []
    outcomes = {"answered": 0, "refused": 0}
    saves: list[tuple[float, object]] = []
    count_lock = threading.Lock()

    def guard(fn):
        def run_():
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported by the test below
                failures.append(exc)
                done.set()
        return run_

    @guard
    def observer():
        for fp in frames:
            agent.observe_perception(fp)
        agent.flush()
        done.set()

    @guard
    def saver():
        k = 0
        while not done.is_set():
            d = tmp_path / f"save{k % 2}"
            agent.save(d)
            saves.append((k, d))
            k += 1
            time.sleep(0.02)

    def asker(seed):
        @guard
        def loop():
            i = seed
            while not done.is_set():
                q, opts = QUESTIONS[i % len(QUESTIONS)]
                latest = agent.latest_t
                # now, a past time, and sometimes a time in the future (refused with a clear error)
                t = None if i % 3 == 0 else (latest or 0.0) * ((i * 37) % 100) / 100 if i % 3 == 1 else \
                    (latest or 0.0) + 5.0
                try:
                    ans = agent.ask(q, t=t, options=opts)
                except InvalidInputError as exc:
                    assert "cannot answer at t=" in str(exc) and "future" in str(exc), exc
                    with count_lock:
                        outcomes["refused"] += 1
                else:
                    assert isinstance(ans, Answer) and ans.text, ans
                    assert ans.letter is None or ans.letter in "ABCD"[:len(opts or ())]
                    with count_lock:
                        outcomes["answered"] += 1
                i += 2
        return loop

    threads = [threading.Thread(target=f) for f in (observer, saver, asker(0), asker(1))]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "a thread is stuck (deadlock?)"
    assert not failures, failures
    wall = time.perf_counter() - t0
    assert outcomes["answered"] > 200 and saves, (outcomes, len(saves), wall)

    # the memory equals the one a single thread builds from the same frames, at every time asked
    for t in _times(frames):
        assert snapshot_facts(agent.memory.as_of(t)) == snapshot_facts(replay.as_of(t)), t
    assert agent.latest_t == frames[-1].t_s
    # a save taken while frames arrived is a whole prefix of the stream, and answers the same
    _, last_dir = saves[-1]
    loaded = Agent.load(last_dir)
    assert loaded.latest_t is not None
    for t in [x for x in _times(frames) if x <= loaded.latest_t]:
        assert snapshot_facts(loaded.memory.as_of(t)) == snapshot_facts(replay.as_of(t)), t
    # and later questions at "now" still work on the threaded agent
    assert agent.ask("Where is the mug?").text


# ---------------------------------------------------------------------- the lock itself
def _in_thread(fn):
    th = threading.Thread(target=fn, daemon=True)
    th.start()
    return th


def test_writers_exclude_readers_and_each_other():
    lock, stop, mu = ReadWriteLock(), threading.Event(), threading.Lock()
    inside, worst, bad = [0, 0], [0, 0], []  # [readers, writers] inside now / at most; violations seen

    def loop(kind):
        while not stop.is_set():
            with (lock.write() if kind else lock.read()):
                with mu:
                    inside[kind] += 1
                    worst[kind] = max(worst[kind], inside[kind])
                    if (inside[1] and inside[0]) or inside[1] > 1:
                        bad.append(tuple(inside))
                time.sleep(0.0005)
                with mu:
                    inside[kind] -= 1

    threads = [_in_thread(lambda k=k: loop(k)) for k in (0, 0, 0, 1, 1)]
    time.sleep(1.0)
    stop.set()
    for th in threads:
        th.join(5)
    assert not bad, bad[:5]
    assert worst[1] == 1 and worst[0] >= 2, worst  # readers overlapped, writers never


def test_neither_side_starves():
    """Two readers in a loop cannot keep a writer out, and a writer in a loop cannot keep readers out."""
    lock, stop = ReadWriteLock(), threading.Event()
    counts = {"r": 0, "w": 0}

    def reader():
        while not stop.is_set():
            with lock.read():
                counts["r"] += 1
                time.sleep(0.001)

    def writer():
        while not stop.is_set():
            with lock.write():
                counts["w"] += 1
                time.sleep(0.001)

    threads = [_in_thread(f) for f in (reader, reader, writer)]
    time.sleep(1.0)
    stop.set()
    for th in threads:
        th.join(5)
    assert counts["w"] > 50 and counts["r"] > 50, counts


def test_reentry_and_misuse():
    lock = ReadWriteLock()
    with lock.write():
        with lock.write():
            with lock.read():  # the writer may read
                pass
    with lock.read():
        with lock.read():
            pass
        with pytest.raises(RuntimeError, match="would wait for itself"):
            lock.acquire_write()
    with pytest.raises(RuntimeError):
        lock.release_read()
    with pytest.raises(RuntimeError):
        lock.release_write()
    with lock.write():  # still usable
        pass


def test_interrupted_wait_leaves_the_lock_usable():
    """Ctrl-C while waiting for the write lock (a reader holds it) must not wedge later readers. The interrupt
    is raised inside the wait itself (as a KeyboardInterrupt from a signal would be), so the test does not
    depend on which thread the OS hands a signal to on a busy machine."""
    lock = ReadWriteLock()
    held, release = threading.Event(), threading.Event()

    def holder():
        with lock.read():
            held.set()
            release.wait(60)

    def interrupted_wait(timeout=None):
        assert lock._waiting_writers == 1  # the writer is queued when Ctrl-C comes
        raise KeyboardInterrupt

    th = _in_thread(holder)
    assert held.wait(60), "the reader thread never took the lock"
    lock._cond.wait = interrupted_wait
    with pytest.raises(KeyboardInterrupt):
        lock.acquire_write()  # waits for the reader, interrupted
    del lock._cond.wait
    assert lock._waiting_writers == 0 and lock._writer is None
    release.set()
    th.join(5)
    got = []

    def reader():
        with lock.read():
            got.append(1)

    _in_thread(reader).join(5)
    assert got, "a reader after the interrupted writer never got the lock"
    with lock.write():  # and a writer
        pass


def test_locks_do_not_stop_copying(frames):
    import copy
    import pickle

    agent = Agent(CONFIG)
    for fp in frames[:40]:
        agent.observe_perception(fp)
    agent.ask("Where is the mug?")
    for twin in (copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))):
        assert twin._rwlock is not agent._rwlock
        assert snapshot_facts(twin.memory.as_of(5.0)) == snapshot_facts(agent.memory.as_of(5.0))
        twin.observe_perception(frames[40])
        assert twin.ask("Where is the mug?").text and agent.latest_t == frames[39].t_s
