"""Simulator and oracle speed: episode generation time, rendering and oracle frames per second.

    .venv/bin/python benchmarks/sim_speed.py [--minutes 10] [--width 320] [--height 240]

Prints name=value lines; `frames_per_s` (full RGB + depth + ids rendering, one core) is the last.
CPU seconds (process_time) are printed beside wall seconds because the machine may be shared."""
from __future__ import annotations

import argparse
import time

from directme.sim import OraclePerception, generate_episode


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    ep, wall, cpu = _timed(lambda: generate_episode(seed=args.seed, minutes=args.minutes, width=args.width,
                                                    height=args.height))
    print(f"episode_frames={ep.n_frames}")
    print(f"questions={len(ep.questions)}")
    print(f"generate_s={wall:.2f}")
    print(f"generate_cpu_s={cpu:.2f}")
    n = min(ep.n_frames, 300)
    frames, wall, cpu = _timed(lambda: list(ep.frames(0, n)))
    render_fps, render_cpu_fps = n / wall, n / cpu
    for noise in ("none", "realistic"):
        oracle = OraclePerception(ep, noise=noise, seed=0)
        oracle.process(frames[0])  # warm-up: lazy imports (scipy.ndimage)
        _, wall, cpu = _timed(lambda: [oracle.process(f) for f in frames])
        print(f"oracle_{noise}_frames_per_s={n / wall:.1f}")
        print(f"oracle_{noise}_cpu_frames_per_s={n / cpu:.1f}")
    print(f"render_cpu_frames_per_s={render_cpu_fps:.1f}")
    print(f"frames_per_s={render_fps:.1f}")


if __name__ == "__main__":
    main()
