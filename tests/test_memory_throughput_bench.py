"""benchmarks/memory_throughput.py: the update rate is one figure per fresh memory, and the printed rate their median."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("directme.sim")
BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory_throughput.py"
_SPEC = importlib.util.spec_from_file_location("memory_throughput", BENCH)
memory_throughput = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(memory_throughput)


def test_each_repeat_feeds_a_fresh_memory_the_whole_episode():
    wall, cpu, n_inst = memory_throughput.update_rate(0.25, seed=0, repeats=2)
    assert len(wall) == len(cpu) == 2 and all(x > 0 for x in wall + cpu)
    assert n_inst > 0


def test_fewer_than_one_repeat_is_refused():
    r = subprocess.run([sys.executable, str(BENCH), "--repeats", "0", "--objects", "20", "--queries", "2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--repeats must be at least 1" in r.stderr


def test_the_ab_comparison_of_a_checkout_with_itself_builds_the_same_objects():
    repo = BENCH.parents[1]
    r = subprocess.run([sys.executable, str(repo / "benchmarks" / "memory_speed_ab.py"), "--base", str(repo),
                        "--pairs", "1", "--minutes", "0.25"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split("=", 1) for line in r.stdout.split())
    assert lines["same_objects"] == "True"
    assert float(lines["paired_ratio"]) > 0 and len(lines["base_runs"].split(",")) == 1


def test_the_ab_comparison_refuses_a_folder_without_the_package(tmp_path):
    r = subprocess.run([sys.executable, str(BENCH.parents[1] / "benchmarks" / "memory_speed_ab.py"), "--base",
                        str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "no directme package there" in r.stderr
