"""Resident memory of the spatial memory over a long 1 fps stream from the simulator.

    python benchmarks/long_stream.py --hours 10 [--base-minutes 10] [--checkpoints 10]

A simulator episode of ``--base-minutes`` (oracle perception, noise none, 320x240) is rendered once and
written to a temporary directory; the wearer then walks it again and again (timestamps continue) until
``--hours`` of stream have been fed. Only the memory and one frame at a time are held in RAM. Prints RSS
at checkpoints (flat once no new objects appear), then ``peak_rss_mb`` last.
"""
from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from pathlib import Path

import numpy as np

from directme.bench.memory_use import peak_rss_mb, rss_mb
from directme.geometry import Intrinsics, Pose
from directme.memory import MemoryConfig, SpatialMemory
from directme.types import Frame, FramePerception, InstanceObservation


def write_base(directory: Path, minutes: float, seed: int) -> None:
    """Render the base episode once (run in a child process, so its RAM does not count here)."""
    from directme.sim import OraclePerception, generate_episode

    ep = generate_episode(seed=seed, minutes=minutes)
    oracle = OraclePerception(ep, noise="none", seed=seed)
    K = ep.intrinsics
    np.savez(directory / "meta.npz", t_s=[g.t_s for g in ep.frames_gt], fps=ep.fps, up=ep.up_world,
             K=[K.fx, K.fy, K.cx, K.cy, K.width, K.height])
    for frame in ep.frames():
        fp = oracle.perceive(frame)
        f = fp.frame
        np.savez(directory / f"{f.index:06d}.npz", rgb=f.rgb, depth=f.depth_m, T=f.T_world_cam.matrix,
                 masks=np.array([i.mask for i in fp.instances], bool).reshape(-1, *f.depth_m.shape),
                 track=np.array([i.track_id for i in fp.instances], np.int64),
                 score=np.array([i.score for i in fp.instances], np.float64),
                 label=np.array([i.label for i in fp.instances], str), tag=str(fp.scene_tag))


def replay(directory: Path, K: Intrinsics, t_s: np.ndarray, duration_s: float, loop: int,
           index: int) -> FramePerception:
    with np.load(directory / f"{index:06d}.npz") as z:
        insts = tuple(InstanceObservation(int(t), str(lab), float(s), m)
                      for t, lab, s, m in zip(z["track"], z["label"], z["score"], z["masks"]))
        frame = Frame(loop * duration_s + float(t_s[index]), z["rgb"], z["depth"], Pose(z["T"]), K,
                      index=loop * len(t_s) + index, source="long_stream")
        return FramePerception(frame, insts, str(z["tag"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=10.0)
    ap.add_argument("--base-minutes", type=float, default=10.0)
    ap.add_argument("--checkpoints", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        child = multiprocessing.get_context("fork").Process(target=write_base, args=(base, a.base_minutes, a.seed))
        child.start()
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"rendering the base episode failed (exit code {child.exitcode})")
        with np.load(base / "meta.npz") as z:
            t_s, fps, up, k = z["t_s"], float(z["fps"]), tuple(z["up"].tolist()), z["K"].tolist()
        K = Intrinsics(k[0], k[1], k[2], k[3], int(k[4]), int(k[5]))
        n, duration = len(t_s), len(t_s) / fps
        total = int(round(a.hours * 3600 * fps))
        print(f"base_frames={n}")
        print(f"stream_frames={total}")
        print(f"rss_before_mb={rss_mb():.1f}")
        mem = SpatialMemory(MemoryConfig(up_world=up))
        every = max(1, total // a.checkpoints)
        t0 = time.perf_counter()
        for i in range(total):
            loop, j = divmod(i, n)
            mem.update(replay(base, K, t_s, duration, loop, j))
            if (i + 1) % every == 0 or i + 1 == total:
                print(f"frames={i + 1} hours={(i + 1) / fps / 3600:.2f} objects={len(mem.as_of(1e12).objects)} "
                      f"rss_mb={rss_mb():.1f} elapsed_s={time.perf_counter() - t0:.0f}", flush=True)
    print(f"peak_rss_mb={peak_rss_mb():.1f}")


if __name__ == "__main__":
    main()
