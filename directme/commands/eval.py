"""`directme eval BENCHMARK --annotations PATH [--videos DIR] [--out DIR] [--workers N] [--ray ADDRESS]
[--in-process] [--video-timeout S] [--on-config-change error|rerun|keep] [--config FILE]`.

Each video runs in a worker process (one by default), so a crash or a timeout fails only that video.
Progress bars over videos and items (with ETA) go to stderr; a summary table ends the run."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Optional

from ..bench import BENCHMARKS, Benchmark
from ..bench.resume import ON_CONFIG_CHANGE, OnConfigChange
from .argtypes import at_least, check_path, fps, seconds

BENCH_CHOICES = BENCHMARKS  # plain strings: argparse prints them in --help and in its errors


def add_arguments(p: argparse.ArgumentParser, benchmark: Optional[str] = None) -> None:
    """The options of `directme eval`; with ``benchmark`` given (examples/bench_common.py) it is fixed
    instead of the first positional argument."""
    if benchmark is None:
        p.add_argument("benchmark", choices=BENCH_CHOICES, help="which benchmark's annotation format and protocol")
    else:
        p.set_defaults(benchmark=Benchmark(benchmark).value)
    p.add_argument("--annotations", required=True,
                   help="annotation file or folder (sim: an episode folder written by `directme sim`)")
    p.add_argument("--videos", default=None, help="folder holding the benchmark's videos")
    p.add_argument("--out", default=None, help="results folder (default out/eval/BENCHMARK); reruns resume here")
    p.add_argument("--workers", type=at_least(1), default=1,
                   help="local worker processes, each video in a child process so a crash (segfault, out of "
                        "memory) fails only that video (or Ray CPUs with --ray local)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help='run episodes as Ray tasks: a cluster address, "auto", or "local"')
    p.add_argument("--video-timeout", type=seconds, default=None, metavar="SECONDS",
                   help="stop a worker that spends longer on one video and record that video as failed (retried "
                        "on the next run); default: no limit. Not applied with --ray or --in-process")
    p.add_argument("--in-process", action="store_true",
                   help="debugging: run the videos in this process (pdb, profilers); a hard crash ends the run")
    p.add_argument("--on-config-change", choices=ON_CONFIG_CHANGE, default=OnConfigChange.ERROR.value,
                   help="when --out holds results of a different configuration: stop (default), evaluate "
                        "those videos again, or keep them")
    p.add_argument("--check", action="store_true", help="only load and validate the annotations; print items=N")
    p.add_argument("--config", default=None,
                   help="agent config (YAML/JSON) for the model under test; plain videos need a depth model, "
                        "a file or a packaged config's name, e.g. perception-da3-gdino-sam2")
    p.add_argument("--model", default="agent", help='"agent" (default), "scripted" (baseline) or "module:factory"')
    p.add_argument("--fps", type=fps, default=1.0, help="frames per second streamed to the model (0 = all)")
    p.add_argument("--timeline", default=None, help="TeleEgo timeline JSON mapping 'D1-09:31:38' labels")
    p.add_argument("--noise", choices=("none", "realistic"), default="none", help="sim: oracle perception noise")
    p.add_argument("--limit", type=at_least(1), default=None, help="evaluate only the first N episodes (N >= 1)")
    p.add_argument("--blank-frames", action="store_true",
                   help="stream black frames instead of videos (a dry run of the protocol, no videos needed)")
    p.add_argument("--judge-url", default=None, help="OpenAI-compatible base URL of an LLM judge (open-ended items)")
    p.add_argument("--judge-model", default=None, help="model name served at --judge-url")
    p.add_argument("--judge-key-env", default="OPENAI_API_KEY", help="environment variable holding the judge's key")


def run(args: argparse.Namespace) -> int:
    from ..bench import count_items, get_benchmark
    from ..bench.console import EvalProgress, summary_table
    from ..bench.judge import JudgeSpec
    from ..bench.models import ModelSpec, require_depth_backend
    from ..bench.parallel import EvalJob, ResultStore, run_evaluation
    from ..bench.runner import BlankFrames, VideoFrames
    from ..errors import InvalidInputError

    check_path("--out", args.out, is_dir=True)
    module = get_benchmark(args.benchmark)
    episodes = module.load(args.annotations, timeline=args.timeline)
    if args.limit is not None:
        episodes = episodes[: args.limit]
    print(f"episodes={len(episodes)}")
    if args.check:
        print(f"items={count_items(episodes)}")
        return 0
    fps = args.fps or None
    if args.benchmark == Benchmark.SIM:
        frames = module.SimFrames()
    elif args.blank_frames:
        frames = BlankFrames(fps=fps or 1.0)
    elif args.videos:
        frames = VideoFrames(str(args.videos), fps)
    else:
        raise InvalidInputError(f"{args.benchmark} needs --videos DIR (or --blank-frames for a dry run)")
    judge = JudgeSpec(args.judge_url, args.judge_model, args.judge_key_env) if args.judge_url else None
    if args.judge_url and not args.judge_model:
        raise InvalidInputError("--judge-url needs --judge-model NAME")
    opts = {"judge_spec": judge} if judge else {}
    if args.benchmark == Benchmark.SIM and args.model == "agent":
        model = module.oracle_spec(args.annotations, args.config, noise=args.noise)
    else:
        model = ModelSpec(target=args.model, config=args.config)
    if isinstance(frames, VideoFrames):
        require_depth_backend(model, "plain videos")
    job = EvalJob(benchmark=args.benchmark, model=model, frames=frames, fps=fps, opts=opts)
    out = Path(args.out or Path("out") / "eval" / args.benchmark)
    progress, t0 = EvalProgress(), time.perf_counter()
    try:
        summary = run_evaluation(job, episodes, out, workers=max(1, args.workers), ray_address=args.ray,
                                 in_process=args.in_process, on_config_change=args.on_config_change,
                                 progress=progress, video_timeout_s=args.video_timeout)
    finally:
        progress.close()
    errors = {str(e.get("episode_id")): str(e.get("error", "")) for e in ResultStore(out).errors()}
    print(summary_table(summary, time.perf_counter() - t0, errors))
    print(f"out={out}")
    return 1 if summary["failed"] else 0
