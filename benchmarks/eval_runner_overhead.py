"""Overhead of the evaluation harness itself (no model cost): annotation loading and the
streaming runner + PhoStream protocol with a scripted model on black frames, with one worker process
and with ``--workers`` worker processes (every video runs in a worker process, so workers=1 includes
the process start-up cost that in-process runs do not pay).

    python benchmarks/eval_runner_overhead.py --annotations ../shared/data/qa/phostream/phostream_annotations.json --limit 40

Prints ``name=value`` lines.
"""
from __future__ import annotations

import argparse
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--annotations", required=True, help="PhoStream annotation file")
    ap.add_argument("--limit", type=int, default=40, help="videos to stream")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    from directme.bench import count_items, phostream
    from directme.bench.models import ModelSpec
    from directme.bench.parallel import EvalJob, run_evaluation
    from directme.bench.runner import BlankFrames

    t0 = time.perf_counter()
    episodes = phostream.load(args.annotations)
    print(f"phostream_load_s={time.perf_counter() - t0:.3f}")
    print(f"phostream_items={count_items(episodes)}")
    subset = episodes[: args.limit]
    # answers at once: forward items are polled until the first second after t_q
    job = EvalJob("phostream", ModelSpec("scripted", kwargs={"default_text": "ok"}), BlankFrames(fps=1.0))
    for workers in (1, args.workers):
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            summary = run_evaluation(job, subset, out, workers=workers, progress=None)
            wall = time.perf_counter() - t0
        n_frames = sum(int(e.meta["horizon_s"]) + 1 for e in subset)
        print(f"workers={workers} videos={summary['finished']} questions={count_items(subset)} "
              f"frames={n_frames} wall_s={wall:.2f} frames_per_s={n_frames / wall:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
