"""End to end: a simulator episode exported in UCS-Bench format runs through the streaming
runner and reproduces `directme demo`'s accuracy (same agent, oracle perception)."""
from __future__ import annotations

import json
import re

import pytest

from directme.bench import sim as sim_bench
from directme.bench import ucsbench
from directme.bench.parallel import EvalJob, run_evaluation
from directme.cli import main


@pytest.fixture(scope="module")
def episode_dir(tmp_path_factory):
    from directme.sim import generate_episode, save_episode

    ep = generate_episode(seed=3, minutes=1.5, width=96, height=72)
    out = tmp_path_factory.mktemp("sim") / "ep"
    save_episode(ep, out)
    return ep, out


def test_sim_exported_as_ucsbench_reproduces_demo(episode_dir, tmp_path):
    from directme.commands.demo import evaluate_episode
    from directme.sim import to_ucsbench

    ep, d = episode_dir
    qa = tmp_path / "qa.json"
    qa.write_text(json.dumps(to_ucsbench(ep)), encoding="utf-8")
    episodes = ucsbench.load(str(qa))
    assert len(episodes) == 1 and len(episodes[0].items) == len(ep.questions) > 0
    job = EvalJob("ucsbench", model=sim_bench.oracle_spec(str(d)), frames=sim_bench.SimFrames(str(d)), fps=None)
    out = run_evaluation(job, episodes, tmp_path / "run", progress=None)
    demo = evaluate_episode(ep, baselines=False)
    assert out["failed"] == [] and out["metrics"]["overall"]["total"] == demo["n_questions"]
    assert out["metrics"]["overall"]["accuracy"] == pytest.approx(demo["overall"])
    per = {k: v["accuracy"] for k, v in out["metrics"]["per_subcategory"].items()}
    assert per == pytest.approx(demo["per_subtask"])
    chosen = {r["qid"]: r["chosen"] for r in demo["questions"]}
    (pred,) = [json.loads(p.read_text()) for p in (tmp_path / "run" / "predictions").glob("*.json")]
    assert {r["qid"]: r["pred_letter"] for r in pred["records"]} == chosen


def test_eval_sim_command(episode_dir, tmp_path, capsys):
    _, d = episode_dir
    assert main(["eval", "sim", "--annotations", str(d), "--out", str(tmp_path / "o"), "--fps", "0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^overall +[0-9.]+ \(\d+/\d+\)$", out, re.M) and (tmp_path / "o" / "metrics.json").is_file()
