"""Memory update speed on a simulator episode and query latency with 2,000 objects in memory.

    python benchmarks/memory_throughput.py [--minutes 3] [--objects 2000] [--queries 300] [--repeats 3]

Prints name=value lines; the last two are ``frames_per_s`` (the median over ``--repeats`` fresh memories
fed the episode, each run's figure in ``frames_per_s_runs``; oracle perception, 320x240, perception
precomputed and not timed) and ``query_p95_ms`` (``as_of(t, node_ids=...)`` at a random past t plus
reading the question's target nodes and their graph neighbours). Wall-clock figures depend on how busy
the machine is; the ``*_cpu_*`` lines give this process's CPU time for comparison.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from directme.geometry import Intrinsics, Pose
from directme.memory import SpatialMemory
from directme.types import Frame, FramePerception, InstanceObservation


def update_rate(minutes: float, seed: int, repeats: int = 3) -> tuple[list[float], list[float], int]:
    """Frames per second (wall, CPU) of ``repeats`` fresh memories each fed the whole episode."""
    from directme.sim import OraclePerception, generate_episode

    ep = generate_episode(seed=seed, minutes=minutes)
    oracle = OraclePerception(ep, noise="none", seed=seed)
    fps = [oracle.perceive(f) for f in ep.frames()]
    wall, cpu = [], []
    for _ in range(repeats):
        mem = SpatialMemory()
        t0, c0 = time.perf_counter(), time.process_time()
        mem.update_many(fps)
        wall.append(len(fps) / (time.perf_counter() - t0))
        cpu.append(len(fps) / (time.process_time() - c0))
    return wall, cpu, sum(len(f.instances) for f in fps)


PER_FRAME = 10


def many_objects_stream(n_objects: int, per_frame: int = PER_FRAME, width: int = 320, height: int = 240):
    """A camera sliding along a wall of labelled patches: every frame shows ``per_frame`` new objects."""
    K = Intrinsics.from_fov(width, height, 70.0)
    depth = np.full((height, width), 2.0, np.float32)
    rgb = np.zeros((height, width, 3), np.uint8)
    labels = ["cup", "chair", "book", "lamp", "plant", "bottle", "box", "bag"]
    R = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # camera looks along world +x
    for k in range(n_objects // per_frame):
        insts = []
        for j in range(per_frame):
            r, c = divmod(j, 5)
            mask = np.zeros((height, width), bool)
            mask[40 + 100 * r: 70 + 100 * r, 20 + 60 * c: 50 + 60 * c] = True
            oid = k * per_frame + j
            insts.append(InstanceObservation(oid, labels[oid % len(labels)], 0.9, mask))
        pose = Pose.from_Rt(R, [0.0, -4.0 * k, 1.5])
        yield FramePerception(Frame(float(k), rgb, depth, pose, K, index=k), tuple(insts), "hall")


def query_latency(n_objects: int, n_queries: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    mem = SpatialMemory()
    mem.update_many(many_objects_stream(n_objects))
    t_end = mem.latest_t_s
    ids = list(mem.as_of(t_end).objects)
    rng = np.random.default_rng(seed)

    def one(t: float) -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        known = ids[: min(len(ids), (int(t) + 1) * PER_FRAME)]
        targets = [known[int(rng.integers(len(known)))] for _ in range(2)]
        snap = mem.as_of(t, node_ids=targets)
        for nid in targets:
            snap.objects[nid]
            for nb in snap.graph.neighbors(nid):
                if snap.graph.nodes[nb]["kind"] == "object":
                    snap.objects[nb].position_w
        return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000

    past = np.array([one(float(rng.uniform(0, t_end))) for _ in range(n_queries)])
    latest = np.array([one(t_end + float(rng.uniform(0, 5))) for _ in range(n_queries)])
    return past, latest, len(ids)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=3.0, help="simulator episode length for the update rate")
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3,
                    help="fresh memories fed the episode; the update rate printed is their median (shared machines vary)")
    a = ap.parse_args()
    if a.repeats < 1:
        ap.error("--repeats must be at least 1")
    past, latest, n = query_latency(a.objects, a.queries, a.seed)
    print(f"objects_in_memory={n}")
    for name, ms in (("latest", latest), ("past", past)):
        print(f"query_{name}_p50_ms={np.percentile(ms[:, 0], 50):.2f}")
        print(f"query_{name}_p95_ms={np.percentile(ms[:, 0], 95):.2f}")
        print(f"query_{name}_cpu_p95_ms={np.percentile(ms[:, 1], 95):.2f}")
    fps_wall, fps_cpu, n_inst = update_rate(a.minutes, a.seed, a.repeats)
    print(f"instances_total={n_inst}")
    print("frames_per_s_runs=" + ",".join(f"{x:.1f}" for x in fps_wall))
    print(f"frames_per_s_cpu={float(np.median(fps_cpu)):.1f}")
    print(f"frames_per_s={float(np.median(fps_wall)):.1f}")
    print(f"query_p95_ms={np.percentile(past[:, 0], 95):.2f}")


if __name__ == "__main__":
    main()
