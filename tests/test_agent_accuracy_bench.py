"""benchmarks/agent_accuracy.py: streaming episodes in worker processes (``--jobs``) changes nothing but the
wall time - every episode is seeded - and the per-subtask intervals cover the pooled accuracy."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "agent_accuracy", Path(__file__).resolve().parents[1] / "benchmarks" / "agent_accuracy.py")
agent_accuracy = importlib.util.module_from_spec(_SPEC)
sys.modules["agent_accuracy"] = agent_accuracy  # workers find run_seed by its module's name
_SPEC.loader.exec_module(agent_accuracy)


@pytest.mark.slow
def test_parallel_episodes_give_the_same_figures(capsys):
    serial = agent_accuracy.run_length(1, [0, 1], ["realistic"], "templates", jobs=1)
    lines_serial = [l for l in capsys.readouterr().out.splitlines() if l.startswith("minutes=")]
    parallel = agent_accuracy.run_length(1, [0, 1], ["realistic"], "templates", jobs=2)
    lines_parallel = [l for l in capsys.readouterr().out.splitlines() if l.startswith("minutes=")]
    r1, r2 = serial["realistic"], parallel["realistic"]
    assert r1["n_questions"] > 0 and r1["n_questions"] == r2["n_questions"]
    assert r1["overall"] == r2["overall"] and r1["per_subtask"] == r2["per_subtask"]
    assert r1["interval"] == r2["interval"]
    assert [l.split(" wall_s=")[0] for l in lines_serial] == [l.split(" wall_s=")[0] for l in lines_parallel]
    assert [l.split()[1] for l in lines_parallel] == ["seed=0", "seed=1"]  # in seed order
    for s, acc in r1["per_subtask"].items():
        lo, hi = r1["interval"][s]
        assert lo <= acc <= hi
    assert agent_accuracy.peak_rss_mb() > 0
