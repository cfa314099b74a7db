"""Many episodes: per-episode result files, resumable reruns, a failing or crashing video never
loses the others; local worker processes (the default), in-process runs, and a local Ray
instance with 2 workers started by ``--ray local``."""
from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from directme.bench import ucsbench
from directme.bench.models import ModelSpec
from directme.bench.parallel import EvalJob, ResultStore, run_evaluation
from directme.bench.resume import config_hash, job_fingerprint
from directme.bench.runner import BlankFrames
from directme.errors import InvalidInputError

ART = Path(__file__).resolve().parent / "artifacts" / "bench"
ANSWERS = {"Where is the sofa now?": [[0, "B"], [6, "C"]], "Can I reach the cup now?": "A",
           "How many chairs have I seen?": "D"}


def _job() -> EvalJob:
    return EvalJob(benchmark="ucsbench", model=ModelSpec("scripted", kwargs={"answers": ANSWERS}),
                   frames=BlankFrames(fps=1.0), fps=1.0)


def _episodes(broken: bool = False):
    eps = ucsbench.load(str(ART / "ucsbench_questions.jsonl"))
    if broken:  # an episode whose items make the protocol fail half-way
        eps.append(replace(eps[0], episode_id="v3_broken", items=(eps[0].items[0], "not a question")))
    return eps


def test_serial_resume_and_failure_isolation(tmp_path):
    seen = []
    out = run_evaluation(_job(), _episodes(broken=True), tmp_path, progress=lambda d, n, r: seen.append(r["episode_id"]))
    assert out["finished"] == 2 and out["failed"] == ["v3_broken"] and out["skipped"] == 0
    assert out["metrics"]["overall"]["accuracy"] == 1.0 and out["metrics"]["overall"]["total"] == 4
    store = ResultStore(tmp_path)
    assert store.done("v1") and store.done("v2") and not store.done("v3_broken")
    (err,) = store.errors()
    assert "AttributeError" in err["error"] and "Traceback" in err["traceback"]
    md = (tmp_path / "metrics.md").read_text()
    assert "overall | 1.0000 (4/4)" in md and "(1 failed)" in md
    assert json.loads((tmp_path / "metrics.json").read_text())["finished"] == 2

    before = (tmp_path / "predictions" / "v1.json").stat().st_mtime_ns
    seen.clear()
    again = run_evaluation(_job(), _episodes(broken=True), tmp_path, progress=lambda d, n, r: seen.append(r["episode_id"]))
    assert seen == ["v3_broken"]  # finished videos are skipped, the failed one is retried
    assert again["skipped"] == 2 and again["finished"] == 2
    assert (tmp_path / "predictions" / "v1.json").stat().st_mtime_ns == before

    seen.clear()
    fixed = run_evaluation(_job(), _episodes(), tmp_path, progress=lambda d, n, r: seen.append(r["episode_id"]))
    assert seen == [] and fixed["skipped"] == 2 and fixed["failed"] == []


def test_local_worker_processes(tmp_path):
    eps = _episodes(broken=True)
    out = run_evaluation(_job(), eps, tmp_path, workers=2, progress=None)
    assert out["finished"] == 2 and out["failed"] == ["v3_broken"]
    serial = run_evaluation(_job(), eps, tmp_path / "serial", progress=None, in_process=True)
    assert out["metrics"] == serial["metrics"]


def _pids(out_dir: Path) -> dict[str, int]:
    """Which process evaluated each episode (recorded with every result)."""
    store = ResultStore(out_dir)
    return {r["episode_id"]: r["pid"] for r in store.load(["v1", "v2", "v3_broken"]) + store.errors()}


def test_default_runs_episodes_in_one_child_process_and_in_process_on_request(tmp_path):
    child = run_evaluation(_job(), _episodes(), tmp_path / "child", progress=None)
    pids = _pids(tmp_path / "child")
    assert set(pids) == {"v1", "v2"} and len(set(pids.values())) == 1  # one worker, reused
    assert os.getpid() not in pids.values()
    here = run_evaluation(_job(), _episodes(), tmp_path / "here", progress=None, in_process=True)
    assert set(_pids(tmp_path / "here").values()) == {os.getpid()}
    assert child["metrics"] == here["metrics"] and child["finished"] == 2
    assert child["executor"] == {"kind": "processes", "workers": 1} and here["executor"] == {"kind": "in_process"}


@dataclass(frozen=True)
class _DieOn:
    """Frames that kill the worker process (as a segfault would) on one episode."""

    episode_id: str
    how: str = "exit"  # or "sigkill": what the kernel's out-of-memory killer does

    def __call__(self, episode):
        if episode.episode_id == self.episode_id:
            if self.how == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            os._exit(3)
        return BlankFrames(fps=1.0)(episode)


@pytest.mark.parametrize("workers,how,why", [(1, "exit", "exit code 3"), (2, "exit", "exit code 3"),
                                             (1, "sigkill", "killed by signal SIGKILL")])
def test_worker_process_death_loses_only_that_video(tmp_path, workers, how, why):
    """A hard crash (os._exit, as a segfault or the OOM killer) with the default single worker
    too: the crashed video is an error record, the videos before and after it finish."""
    v1, v2 = _episodes()
    eps = [v1, replace(v1, episode_id="v9_crash"), v2]
    job = replace(_job(), frames=_DieOn("v9_crash", how))
    seen = []
    out = run_evaluation(job, eps, tmp_path, workers=workers, progress=lambda d, n, r: seen.append(r["episode_id"]))
    assert out["failed"] == ["v9_crash"] and out["finished"] == 2 and sorted(seen) == ["v1", "v2", "v9_crash"]
    (err,) = ResultStore(tmp_path).errors()
    assert err["episode_id"] == "v9_crash" and f"worker process died ({why}" in err["error"]
    assert out["metrics"]["overall"]["total"] == 4 and out["metrics"]["overall"]["accuracy"] == 1.0
    seen.clear()
    again = run_evaluation(job, eps, tmp_path, workers=workers, progress=lambda d, n, r: seen.append(r["episode_id"]))
    assert seen == ["v9_crash"] and again["skipped"] == 2 and again["failed"] == ["v9_crash"]


@dataclass(frozen=True)
class _HangOn:
    """Frames that never come (a stuck decoder, a hung model) on one episode."""

    episode_id: str

    def __call__(self, episode):
        if episode.episode_id == self.episode_id:
            time.sleep(600)
        return BlankFrames(fps=1.0)(episode)


def test_per_video_timeout_stops_only_that_video(tmp_path):
    """``video_timeout_s``: the worker stuck on one video is stopped and replaced; that video is an error
    record (retried on the next run), the others finish, and the run ends soon after the timeout."""
    v1, v2 = _episodes()
    eps = [v1, replace(v1, episode_id="v9_hang"), v2]
    job = replace(_job(), frames=_HangOn("v9_hang"))
    t0 = time.monotonic()
    out = run_evaluation(job, eps, tmp_path, workers=2, progress=None, video_timeout_s=6.0)
    assert time.monotonic() - t0 < 60  # not the 600 s the video would hang
    assert out["failed"] == ["v9_hang"] and out["finished"] == 2
    (err,) = ResultStore(tmp_path).errors()
    assert err["episode_id"] == "v9_hang" and "timed out after 6 s" in err["error"]
    assert out["metrics"]["overall"]["total"] == 4 and out["metrics"]["overall"]["accuracy"] == 1.0


@pytest.mark.slow
def test_ray_local_starts_two_workers_and_shuts_down(tmp_path):
    """``--ray local --workers 2``: the project starts its own local Ray instance with 2 CPUs,
    runs one task per episode outside this process, and shuts the instance down afterwards."""
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    out = _retry_ray_startup(lambda: run_evaluation(_job(), _episodes(broken=True), tmp_path / "run", workers=2,
                                                    ray_address="local", progress=None))
    assert not ray.is_initialized()  # the instance the run started is gone
    assert out["executor"] == {"kind": "ray", "address": "local", "cpus": 2.0}
    assert out["finished"] == 2 and out["failed"] == ["v3_broken"]
    assert out["metrics"]["overall"]["accuracy"] == 1.0 and out["metrics"]["overall"]["total"] == 4
    pids = _pids(tmp_path / "run")
    assert set(pids) == {"v1", "v2", "v3_broken"} and os.getpid() not in pids.values()
    (err,) = ResultStore(tmp_path / "run").errors()
    assert err["episode_id"] == "v3_broken" and "AttributeError" in err["error"]


def _retry_ray_startup(run):
    """Ray gives its local node a fixed 30 s to start; on a loaded shared CPU retry once."""
    import ray

    for attempt in range(2):
        try:
            return run()
        except Exception as exc:
            if ray.is_initialized():
                ray.shutdown()
            if "timed out during startup" not in str(exc):
                raise
            if attempt == 1:  # Ray's own fixed startup limit, hit only on an overloaded machine
                pytest.skip(f"a local Ray instance could not start on this machine: {exc}")


def _scripted(answers) -> EvalJob:
    return replace(_job(), model=ModelSpec("scripted", kwargs={"answers": answers}))


def test_resume_refuses_results_of_another_configuration(tmp_path):
    first = run_evaluation(_job(), _episodes(), tmp_path, progress=None)
    saved = json.loads((tmp_path / "predictions" / "v1.json").read_text())
    assert saved["config_hash"] == first["config_hash"]
    assert json.loads((tmp_path / "config.json").read_text())["config_hash"] == first["config_hash"]
    assert run_evaluation(_job(), _episodes(), tmp_path, progress=None)["skipped"] == 2  # same config: resumes

    wrong = _scripted({})  # a different model configuration: always "A"
    with pytest.raises(InvalidInputError, match="different configuration.*--on-config-change"):
        run_evaluation(wrong, _episodes(), tmp_path, progress=None)
    assert json.loads((tmp_path / "predictions" / "v1.json").read_text()) == saved  # nothing touched

    kept = run_evaluation(wrong, _episodes(), tmp_path, progress=None, on_config_change="keep")
    assert kept["skipped"] == 2 and kept["other_config"] == ["v1", "v2"]
    assert kept["metrics"] == first["metrics"] and "another or an unknown configuration" in (
        tmp_path / "metrics.md").read_text()

    rerun = run_evaluation(wrong, _episodes(), tmp_path, progress=None, on_config_change="rerun")
    assert rerun["skipped"] == 0 and rerun["finished"] == 2 and rerun["other_config"] == []
    assert rerun["metrics"]["overall"]["accuracy"] < 1.0  # the new answers were scored
    assert json.loads((tmp_path / "predictions" / "v1.json").read_text())["config_hash"] == rerun["config_hash"]


def test_config_hash_follows_the_config_file_contents_not_its_path(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("query:\n  reach_m: 1.0\n")
    b.write_text("query: {reach_m: 1.0}\n")
    job = lambda path: replace(_job(), model=ModelSpec("agent", config=str(path)))  # noqa: E731
    assert config_hash(job_fingerprint(job(a))) == config_hash(job_fingerprint(job(b)))
    b.write_text("query: {reach_m: 1.5}\n")
    assert config_hash(job_fingerprint(job(a))) != config_hash(job_fingerprint(job(b)))
    assert config_hash(job_fingerprint(replace(_job(), fps=2.0))) != config_hash(job_fingerprint(_job()))


def test_results_without_a_hash_are_kept_with_a_warning(tmp_path, caplog):
    run_evaluation(_job(), _episodes(), tmp_path, progress=None)
    path = tmp_path / "predictions" / "v2.json"
    old = json.loads(path.read_text())
    del old["config_hash"]  # as written before results carried a hash
    path.write_text(json.dumps(old))
    with caplog.at_level("WARNING", logger="directme.bench.resume"):
        out = run_evaluation(_scripted({}), _episodes()[1:], tmp_path, progress=None)
    assert out["skipped"] == 1 and out["other_config"] == ["v2"] and "carry no configuration hash" in caplog.text
