"""A wearer's day in memory: a 1 fps stream through a world that keeps growing (directme.sim.day).

    python benchmarks/day_stream.py [--hours 16] [--seed 0] [--noise none|realistic] [--queries 200] [--keep DIR]
    python benchmarks/day_stream.py --questions [--hours 16] [--seed 0] [--noise none realistic]

The simulator streams the day (homes, offices, shops; new places every hour, returns to earlier ones;
oracle perception from a low-resolution id/depth ray cast, see docs/simulator.md) and the memory is fed
one frame at a time; only ``SpatialMemory.update`` is timed. After each hour of stream, one line:
objects and places in memory, RSS, that hour's update frames/s (wall clock, and per CPU second of this process: steadier on a shared machine), and the p95 of ``--queries`` queries
(``as_of(t, node_ids=...)`` plus reading the targets and their graph neighbours, as in
memory_throughput.py) at random past times and at the latest time. At the end: the memory is saved and
loaded (seconds), then ``peak_rss_mb``, ``objects``, ``places``, ``update_cpu_fps_first_hour``,
``update_cpu_fps_last_hour``, ``update_fps_first_hour``,
``update_fps_last_hour``, ``query_p95_ms`` (past times, last hour), ``save_s`` and ``load_s``.

``--questions``: late-day answers instead of timings. The day is fed through an Agent (oracle perception given
frame by frame, ``--noise``); visits that start in the first or the last hour carry the simulator's questions of
the kinds a place decides (``directme.sim.day.DAY_SUBTASKS``: what is near me now, in which direction), asked at
their times with only the frames up to then fed, as in ``benchmarks/agent_accuracy.py``. The last hour's first
visits return to the first two places. Prints per noise and subtask the accuracy in the first hour, in the last
hour at places first seen in the first hour, and at the last hour's other places, then ``acc_first_hour_<noise>``
and ``acc_last_hour_<noise>``.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from directme.bench.memory_use import peak_rss_mb, rss_mb
from directme.memory import MemoryConfig, SpatialMemory
from directme.sim.day import DayConfig, DayStream


def query_ms(mem: SpatialMemory, t_s: float, ids: list, rng: np.random.Generator) -> float:
    """One question's memory work at ``t_s``: two objects (from ``ids``), their nodes and graph neighbours."""
    if not ids:
        return 0.0
    targets = [ids[int(rng.integers(len(ids)))] for _ in range(2)]
    t0 = time.perf_counter()
    snap = mem.as_of(t_s, node_ids=targets)
    for nid in targets:
        if nid not in snap.objects:  # merged into another between the listing and t_s
            continue
        snap.objects[nid]
        for nb in snap.graph.neighbors(nid):
            if snap.graph.nodes[nb]["kind"] == "object":
                snap.objects[nb].position_w
    return (time.perf_counter() - t0) * 1000


def hour_queries(mem: SpatialMemory, n: int, rng: np.random.Generator) -> tuple[float, float]:
    """p95 ms of ``n`` queries at random past times and ``n`` at the latest time. The targets are drawn from
    the objects known at the start of the query's 100 s bin (listed once per bin, untimed: what a question's
    parse names); the query itself runs at a random time inside the bin, so the views it needs are built
    for it, not reused from the listing."""
    t_end = mem.latest_t_s
    past_t = [float(rng.uniform(0, t_end)) for _ in range(n)]
    bins = {float(np.floor(t / 100) * 100) for t in past_t}
    known = {b: list(mem.as_of(b).objects) for b in bins}
    past = [query_ms(mem, t, known[float(np.floor(t / 100) * 100)], rng) for t in past_t]
    ids_end = list(mem.as_of(t_end).objects)
    latest = [query_ms(mem, t_end, ids_end, rng) for _ in range(n)]
    return float(np.percentile(past, 95)), float(np.percentile(latest, 95))


def late_day_questions(hours: float, seed: int, noise: str) -> list[dict]:
    """Feed the day to an Agent and answer the first and last hour's questions; one record per question."""
    from directme.agent import Agent
    from directme.config import oracle_config
    from directme.perception.given import GivenPerception

    agent = Agent(oracle_config(noise, seed), perception=GivenPerception())
    first_hour_places: set[int] = set()
    pending: list = []
    out: list[dict] = []

    def ask_until(t_s: float) -> None:
        while pending and pending[0].t_s < t_s:
            q = pending.pop(0)
            ans = agent.ask(q.text, t=q.t_s, options=q.options)
            late = q.t_s >= (hours - 1) * 3600.0
            where = "first_hour" if not late else ("last_hour_first_places" if q.meta["place"] in first_hour_places
                                                   else "last_hour_other_places")
            out.append({"subtask": q.subtask, "where": where, "right": ans.letter == q.answer})

    windows = ((0.0, 1.0), (hours - 1.0, hours))
    for f in DayStream(seed, DayConfig(hours=hours), noise=noise, question_hours=windows):
        if f.perception.t_s < 3600.0:
            first_hour_places.add(f.place)
        pending.extend(f.questions)
        ask_until(f.perception.t_s)
        agent.observe_perception(f.perception)
    ask_until(float("inf"))
    return out


def print_late_day(noise: str, records: list[dict]) -> None:
    cols = ("first_hour", "last_hour_first_places", "last_hour_other_places")
    print(f"--- noise {noise}: accuracy (questions)")
    print(f"{'subtask':40s} " + " ".join(f"{c:>26s}" for c in cols))
    for s in sorted({r["subtask"] for r in records}) + ["overall"]:
        cells = []
        for c in cols:
            rs = [r["right"] for r in records if r["where"] == c and s in (r["subtask"], "overall")]
            cells.append(f"{np.mean(rs):.3f} ({len(rs)})" if rs else "-")
        print(f"{s:40s} " + " ".join(f"{x:>26s}" for x in cells))
    first = [r["right"] for r in records if r["where"] == "first_hour"]
    last = [r["right"] for r in records if r["where"] != "first_hour"]
    print(f"acc_first_hour_{noise}={np.mean(first):.3f} n={len(first)}")
    print(f"acc_last_hour_{noise}={np.mean(last):.3f} n={len(last)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=16.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--noise", nargs="+", default=["none"], choices=("none", "realistic"),
                    help="oracle noise (several only with --questions)")
    ap.add_argument("--questions", action="store_true", help="late-day answers instead of timings (see above)")
    ap.add_argument("--queries", type=int, default=200, help="queries per hour at past times, and as many at the latest")
    ap.add_argument("--keep", default=None, help="save the day's memory into this directory (default: a temporary one)")
    a = ap.parse_args()
    if a.questions:
        if a.hours < 2:
            ap.error("--questions needs --hours >= 2 (a first and a last hour)")
        for noise in a.noise:
            print_late_day(noise, late_day_questions(a.hours, a.seed, noise))
        return
    if len(a.noise) != 1:
        ap.error("timings take one --noise")
    stream = DayStream(a.seed, DayConfig(hours=a.hours), noise=a.noise[0])
    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    rng = np.random.default_rng(a.seed)
    fps_per_hour: list[tuple[float, float]] = []  # (wall, CPU) update frames/s
    hour, n_hour, upd_s, upd_cpu_s, q_past = 1, 0, 0.0, 0.0, float("nan")
    t_wall = time.perf_counter()

    def report() -> None:
        nonlocal q_past
        snap = mem.as_of(mem.latest_t_s)
        fps_per_hour.append((n_hour / upd_s if upd_s > 0 else float("nan"),
                             n_hour / upd_cpu_s if upd_cpu_s > 0 else float("nan")))
        q_past, q_latest = hour_queries(mem, a.queries, rng)
        print(f"hour={hour} t_s={mem.latest_t_s:.0f} objects={len(snap.objects)} places={len(snap.places)} "
              f"rss_mb={rss_mb():.0f} update_fps={fps_per_hour[-1][0]:.1f} update_cpu_fps={fps_per_hour[-1][1]:.1f} "
              f"query_past_p95_ms={q_past:.2f} "
              f"query_latest_p95_ms={q_latest:.2f} elapsed_s={time.perf_counter() - t_wall:.0f}", flush=True)

    for f in stream:
        if f.perception.t_s >= hour * 3600.0:
            report()
            hour, n_hour, upd_s, upd_cpu_s = hour + 1, 0, 0.0, 0.0
        t0, c0 = time.perf_counter(), time.process_time()
        mem.update(f.perception)
        upd_s += time.perf_counter() - t0
        upd_cpu_s += time.process_time() - c0
        n_hour += 1
    report()
    snap = mem.as_of(mem.latest_t_s)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(a.keep) if a.keep else Path(tmp) / "day"
        t0 = time.perf_counter()
        mem.save(where)
        save_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        SpatialMemory.load(where)
        load_s = time.perf_counter() - t0
    print(f"peak_rss_mb={peak_rss_mb():.1f}")
    print(f"objects={len(snap.objects)}")
    print(f"places={len(snap.places)}")
    print(f"update_cpu_fps_first_hour={fps_per_hour[0][1]:.1f}")
    print(f"update_cpu_fps_last_hour={fps_per_hour[-1][1]:.1f}")
    print(f"update_fps_first_hour={fps_per_hour[0][0]:.1f}")
    print(f"update_fps_last_hour={fps_per_hour[-1][0]:.1f}")
    print(f"query_p95_ms={q_past:.2f}")
    print(f"save_s={save_s:.2f}")
    print(f"load_s={load_s:.2f}")
    print(f"wall_s={time.perf_counter() - t_wall:.0f}")


if __name__ == "__main__":
    main()
