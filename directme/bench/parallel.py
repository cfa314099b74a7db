"""Evaluate many episodes: on local worker processes (the default, even with one worker), on
Ray, or in this process (debugging); results are written per episode as each one finishes,
so a rerun skips finished videos and a crash in one video never loses the others."""
from __future__ import annotations

import json
import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from ..errors import InvalidInputError
from ..types import TextEnum
from .annotations import BenchEpisode, safe_name
from .models import ModelSpec
from .resume import OnConfigChange, config_hash, job_fingerprint, plan_resume
from .runner import StreamRunner
from .workers import run_in_processes

Progress = Callable[[int, int, Mapping[str, Any]], None]  # (done, total, result); may have start(todo, total)
DEFAULT_VIDEO_TIMEOUT_S: Optional[float] = None  # seconds a worker may spend on one video before it is stopped


class EpisodeStatus(TextEnum):
    """A per-episode result's ``status``: evaluated (``records``), or failed (``error``, ``traceback``)."""

    OK = "ok"
    ERROR = "error"


@dataclass(frozen=True)
class EvalJob:
    """Everything a worker needs to evaluate one episode (all picklable)."""

    benchmark: str
    model: ModelSpec
    frames: Callable[[BenchEpisode], Iterable[Any]]
    fps: Optional[float] = 1.0
    opts: Mapping[str, Any] = field(default_factory=dict)


_MODELS: dict[str, Any] = {}


def _model_for(spec: ModelSpec) -> Any:
    """One model per worker, reset between episodes (memory never leaks across videos)."""
    key = json.dumps([spec.target, spec.config, spec.kwargs], sort_keys=True, default=str)
    model = _MODELS.get(key)
    if model is not None:
        model.reset()
        return model
    model = spec.build()
    if hasattr(model, "reset"):
        _MODELS[key] = model
    return model


def evaluate_episode(job: EvalJob, episode: BenchEpisode) -> dict:
    """Run one episode; never raises: failures come back as a record with the traceback."""
    from . import get_benchmark
    from .judge import build_judge

    start = time.perf_counter()
    base = {"episode_id": episode.episode_id, "video": episode.video, "benchmark": job.benchmark,
            "host": socket.gethostname(), "pid": os.getpid()}  # which worker ran it
    try:
        module = get_benchmark(job.benchmark)
        opts = dict(job.opts)
        opts["judge"] = build_judge(opts.pop("judge_spec", None))
        runner = StreamRunner(_model_for(job.model), job.frames(episode), fps=job.fps)
        records = module.run_episode(runner, episode, opts)
        return base | {"status": EpisodeStatus.OK, "records": records, "frames_observed": runner.frames_observed,
                       "wall_s": time.perf_counter() - start}
    except Exception as exc:  # a failing video must not stop the others
        from ..redact import redact_text  # no credentials (a URL's, a key=...) in the written error

        return base | {"status": EpisodeStatus.ERROR, "error": redact_text(f"{type(exc).__name__}: {exc}"),
                       "traceback": redact_text(traceback.format_exc()), "wall_s": time.perf_counter() - start}


class ResultStore:
    """``out/predictions/<episode>.json`` per finished episode, ``out/errors/<episode>.json``
    per failed one (retried on the next run), written atomically."""

    def __init__(self, out_dir: str | Path):
        self.root = Path(out_dir)
        self.pred_dir = self.root / "predictions"
        self.err_dir = self.root / "errors"

    def _path(self, folder: Path, episode_id: str) -> Path:
        return folder / f"{safe_name(episode_id)}.json"

    def done(self, episode_id: str) -> bool:
        return self._path(self.pred_dir, episode_id).is_file()

    def write(self, result: Mapping[str, Any]) -> None:
        ok = result.get("status") == EpisodeStatus.OK
        folder = self.pred_dir if ok else self.err_dir
        folder.mkdir(parents=True, exist_ok=True)
        path = self._path(folder, str(result["episode_id"]))
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(result, indent=1, default=_jsonable), encoding="utf-8")
        os.replace(tmp, path)
        if ok:
            self._path(self.err_dir, str(result["episode_id"])).unlink(missing_ok=True)

    def saved_hashes(self, episode_ids: Iterable[str]) -> dict[str, Optional[str]]:
        """Episode id -> config hash of its finished result (None when it carries none)."""
        return {eid: json.loads(self._path(self.pred_dir, eid).read_text(encoding="utf-8")).get("config_hash")
                for eid in episode_ids if self.done(eid)}

    def discard(self, episode_id: str) -> None:
        """Forget a finished result (it is evaluated again)."""
        self._path(self.pred_dir, episode_id).unlink(missing_ok=True)

    def load(self, episode_ids: Iterable[str]) -> list[dict]:
        out = []
        for eid in episode_ids:
            p = self._path(self.pred_dir, eid)
            if p.is_file():
                out.append(json.loads(p.read_text(encoding="utf-8")))
        return out

    def errors(self) -> list[dict]:
        if not self.err_dir.is_dir():
            return []
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(self.err_dir.glob("*.json"))]


def _jsonable(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, (set, frozenset, tuple)):
        return list(x)
    return str(x)


def print_progress(done: int, total: int, result: Mapping[str, Any]) -> None:
    status = result.get("status", "?")
    extra = f" {result.get('error', '')}" if status != EpisodeStatus.OK else \
        f" {len(result.get('records', []))} records"
    print(f"[{done}/{total}] {result.get('episode_id')} {status} {result.get('wall_s', 0.0):.1f}s{extra}",
          file=sys.stderr, flush=True)


def run_evaluation(job: EvalJob, episodes: Sequence[BenchEpisode], out_dir: str | Path, workers: int = 1,
                   ray_address: Optional[str] = None, progress: Optional[Progress] = print_progress,
                   in_process: bool = False, on_config_change: str = OnConfigChange.ERROR,
                   video_timeout_s: Optional[float] = DEFAULT_VIDEO_TIMEOUT_S) -> dict:
    """Evaluate every unfinished episode, then summarise all finished ones.

    Episodes run on ``workers`` local child processes (one is enough to survive a segfault or
    an out-of-memory kill of one video), or as Ray tasks with ``ray_address``; ``in_process``
    runs them in this process instead (debuggers, profilers; a hard crash then ends the run).
    ``video_timeout_s`` stops a local worker that spends longer on one episode (recorded as that
    episode's error, retried on the next run); Ray tasks and in-process runs are not timed out.
    Each result stores the hash of the job's configuration; finished results from another
    configuration stop the run (``on_config_change="error"``), are evaluated again ("rerun") or
    kept ("keep"); see directme.bench.resume.
    Returns ``{"metrics", "episodes", "finished", "skipped", "failed", "executor", "config_hash",
    "other_config"}`` and writes ``config.json``, ``metrics.json`` and ``metrics.md`` under ``out_dir``.
    """
    from . import get_benchmark

    store = ResultStore(out_dir)
    store.root.mkdir(parents=True, exist_ok=True)
    ids = [e.episode_id for e in episodes]
    if len(set(map(safe_name, ids))) != len(ids):
        raise InvalidInputError("episode ids are not unique after making them file-name safe: "
                                "results would overwrite each other")
    fingerprint = job_fingerprint(job)
    current = config_hash(fingerprint)
    plan = plan_resume(episodes, store.saved_hashes(ids), current, on_config_change, store.root)
    if on_config_change == OnConfigChange.RERUN:
        for eid in plan.changed:
            store.discard(eid)
    todo = list(plan.todo)
    (store.root / "config.json").write_text(json.dumps({"config_hash": current, "fingerprint": fingerprint},
                                                       indent=1, default=_jsonable), encoding="utf-8")
    counter = {"done": len(episodes) - len(todo)}
    if progress is not None and hasattr(progress, "start"):  # e.g. console.EvalProgress: bars sized up front
        progress.start(todo, len(episodes))
    failed: list[str] = []

    def handle(result: dict) -> None:
        result = {**result, "config_hash": current}
        store.write(result)
        counter["done"] += 1
        if result.get("status") != EpisodeStatus.OK:
            failed.append(str(result["episode_id"]))
        if progress:
            progress(counter["done"], len(episodes), result)

    if ray_address and in_process:
        raise InvalidInputError("choose Ray (ray_address) or in-process evaluation, not both")
    executor: dict[str, Any] = {"kind": "processes", "workers": max(1, workers)}
    if not todo:
        executor = {"kind": "none (all episodes were finished)"}
    elif ray_address:
        executor = _run_ray(job, todo, workers, ray_address, handle)
    elif in_process:
        executor = {"kind": "in_process"}
        for ep in todo:
            handle(evaluate_episode(job, ep))
    else:
        run_in_processes(job, todo, workers, evaluate_episode, handle, lambda ep, why: _crashed(ep, job, why),
                         timeout_s=video_timeout_s)

    results = store.load(ids)
    metrics = get_benchmark(job.benchmark).summarize(results)
    summary = {"benchmark": job.benchmark, "metrics": metrics, "episodes": len(episodes), "finished": len(results),
               "skipped": len(episodes) - len(todo), "failed": failed, "executor": executor, "config_hash": current,
               "other_config": list(plan.changed if on_config_change == OnConfigChange.KEEP else ())
               + list(plan.unknown)}
    (store.root / "metrics.json").write_text(json.dumps(summary, indent=1, default=_jsonable), encoding="utf-8")
    (store.root / "metrics.md").write_text(metrics_markdown(summary), encoding="utf-8")
    return summary


def _crashed(ep: BenchEpisode, job: EvalJob, why: str) -> dict:
    return {"episode_id": ep.episode_id, "video": ep.video, "benchmark": job.benchmark, "status": EpisodeStatus.ERROR,
            "error": why, "wall_s": 0.0}


def _run_ray(job: EvalJob, todo: Sequence[BenchEpisode], workers: int, address: str,
             handle: Callable[[dict], None]) -> dict:
    """Ray tasks, one per episode. ``address`` is a cluster address, "auto", or "local" (start
    a local instance with ``workers`` CPUs). GPUs per task: ``job.opts['ray_num_gpus']``.
    Returns what ran them: the address and the cluster's CPU count."""
    from .._lazy import require

    ray = require("ray", "bench")
    started = False
    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
        started = True
    try:
        executor = {"kind": "ray", "address": address, "cpus": ray.cluster_resources().get("CPU")}
        task = ray.remote(num_cpus=1, num_gpus=float(job.opts.get("ray_num_gpus", 0)), max_retries=0)(evaluate_episode)
        refs = {task.remote(job, ep): ep for ep in todo}
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                ep = refs.pop(ref)
                try:
                    handle(ray.get(ref))
                except Exception as exc:  # worker crash / task error: record it, keep going
                    handle(_crashed(ep, job, f"ray task failed: {type(exc).__name__}: {exc}"))
        return executor
    finally:
        if started:
            ray.shutdown()


def metrics_markdown(summary: Mapping[str, Any]) -> str:
    """A two-column markdown table of every scalar metric (nested names joined with '.')."""
    rows = [f"| {k} | {_fmt(v)} |" for k, v in flatten(summary["metrics"]).items()]
    head = (f"# {summary['benchmark']}: {summary['finished']}/{summary['episodes']} episodes"
            f" ({len(summary['failed'])} failed)\n\n")
    other = summary.get("other_config") or []
    if other:
        head += f"{len(other)} result(s) from another or an unknown configuration are included: {', '.join(other)}\n\n"
    head += "| metric | value |\n| --- | --- |\n"
    return head + "\n".join(rows) + "\n"


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested metrics as 'a.b.c' keys; an accuracy cell becomes "0.5000 (2/4)"."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping) and {"accuracy", "correct", "total"} <= set(v):
            acc = "n/a" if v["accuracy"] is None else f"{v['accuracy']:.4f}"
            out[key] = f"{acc} ({v['correct']}/{v['total']})"
        elif isinstance(v, Mapping):
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4f}"
    return "" if v is None else str(v)
