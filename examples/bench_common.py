"""Shared plumbing of the benchmark example scripts: command-line options and one call that
evaluates directme on a folder of videos plus an annotation file, writing per-video
predictions (OUT/predictions/*.json) and a metrics table (OUT/metrics.md, OUT/metrics.json)."""
from __future__ import annotations

import argparse
from typing import Any, Optional

from directme.bench import get_benchmark
from directme.bench.judge import JudgeSpec
from directme.bench.models import ModelSpec, require_depth_backend
from directme.bench.parallel import EvalJob, run_evaluation
from directme.bench.runner import VideoFrames


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--videos", required=True, help="folder with the benchmark's videos (or one video file)")
    p.add_argument("--annotations", required=True, help="the benchmark's annotation file (or folder)")
    p.add_argument("--out", required=True, help="results folder (a rerun resumes here)")
    p.add_argument("--config", default=None,
                   help="agent config YAML/JSON; plain videos need a depth model, e.g. "
                        "examples/configs/perception-da3-gdino-sam2.yaml")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (each video in a child process)")
    p.add_argument("--ray", default=None, help='Ray address ("local", "auto" or host:port)')
    p.add_argument("--fps", type=float, default=1.0, help="frames per second streamed to the agent")
    p.add_argument("--model", default="agent", help='"agent", or "scripted" (a fixed-answer baseline for smoke tests)')
    return p


def evaluate(benchmark: str, args: argparse.Namespace, judge: Optional[JudgeSpec] = None, **load_opts: Any) -> dict:
    module = get_benchmark(benchmark)
    episodes = module.load(args.annotations, **load_opts)
    model = ModelSpec(args.model, config=args.config)
    require_depth_backend(model, "plain videos")
    job = EvalJob(benchmark=benchmark, model=model, frames=VideoFrames(args.videos, args.fps or None),
                  fps=args.fps or None, opts={"judge_spec": judge} if judge else {})
    summary = run_evaluation(job, episodes, args.out, workers=args.workers, ray_address=args.ray)
    with open(f"{args.out}/metrics.md", encoding="utf-8") as f:
        print(f.read())
    return summary
