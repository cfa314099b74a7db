"""A save restores every bit of the state: ``Agent.load(agent.save(d))`` gives back the same component states
(ego log, object table, drift corrector with its vertical and scan grid, places, keyframe images), floats bit
for bit and NaNs in one canonical form; and the kill-during-save benchmark finds only whole saves."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from directme import Agent
from directme.config import oracle_config
from directme.memory.buffers import canonical_nans
from directme.memory.pose.vertical import VerticalEstimator

pytest.importorskip("directme.sim")
from directme.sim import generate_episode  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
NEG_NAN = struct.unpack("<d", bytes.fromhex("000000000000f8ff"))[0]  # sign bit set: what 0 * inf gives on x86


def state(agent: Agent) -> dict:
    """Everything ``Agent.load`` restores, as the components hand it to a save."""
    return {"times": [agent._first_t, agent._last_t, agent._last_input_t], "config": agent.config.to_dict(),
            **{key: part.to_state() for key, part in agent.memory.parts().items()}}


def differences(a, b, path: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ: floats and arrays compared by their bytes, dicts and lists element-wise."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b))} in one only"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        same = a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        return [] if same else [f"{path}: arrays {a.dtype}{a.shape} vs {b.dtype}{b.shape} differ"]
    if isinstance(a, float) or isinstance(b, float):
        same = type(a) is type(b) and struct.pack("<d", a) == struct.pack("<d", b)
        return [] if same else [f"{path}: {a!r} vs {b!r}"]
    return [] if type(a) is type(b) and a == b else [f"{path}: {a!r} vs {b!r}"]


@pytest.fixture(scope="module")
def agent() -> Agent:
    """Two minutes of a simulator episode (seed 1: its vertical has rounding in its length) with realistic
    perception noise."""
    ep = generate_episode(seed=1, minutes=2.0, with_questions=False)
    agent = Agent(oracle_config("realistic", 1), episode=ep)
    for frame in ep.frames():
        agent.observe(frame)
    agent.flush()
    return agent


def test_a_loaded_agent_holds_the_saved_state_bit_for_bit(agent, tmp_path):
    pose = agent.memory.pose
    assert pose.vertical.up is not None and len(pose.scan.grid)  # the vertical and the scan grid are saved
    assert len(agent.memory.objects.records) > 5
    before = state(agent)
    assert np.isnan(before["objects"][1]["obj/st_gone/data"]).any()  # the object table's NaNs are part of it
    agent.save(tmp_path / "a")
    loaded = Agent.load(tmp_path / "a")
    assert differences(before, state(loaded)) == []
    loaded.save(tmp_path / "b")  # and a loaded agent saves the same state again
    assert differences(before, state(Agent.load(tmp_path / "b"))) == []


def test_a_saved_direction_loads_as_written():
    up = np.array([0.0008867944673353028, -0.0013295904828869443, 0.9999987228915446])  # |up| = 1 - 2e-16
    assert np.linalg.norm(up) != 1.0
    est = VerticalEstimator(up=up, hint=up[::-1].copy())
    back = VerticalEstimator.from_json(est.to_json())
    assert back.up.tobytes() == up.tobytes() and back.hint.tobytes() == est.hint.tobytes()
    scaled = VerticalEstimator.from_json({"up": [0.0, 0.0, 2.0]})  # not a unit vector (an edited save): normalised
    assert scaled.up.tolist() == [0.0, 0.0, 1.0]


def test_nans_are_saved_in_one_form(agent, tmp_path):
    arrays = canonical_nans({"f8": np.array([1.5, NEG_NAN, np.nan]), "f4": np.array([NEG_NAN, 2.0], np.float32),
                             "i": np.array([1, 2])})
    assert arrays["f8"].tobytes() == np.array([1.5, np.nan, np.nan]).tobytes()
    assert arrays["f4"].tobytes() == np.array([np.nan, 2.0], np.float32).tobytes()
    assert arrays["i"].tolist() == [1, 2]
    agent.save(tmp_path / "a")
    loaded = Agent.load(tmp_path / "a")
    rec = next(r for r in loaded.memory.objects.records if len(r.states) > 1)
    last = rec.states[-1]
    rec.states[-1] = type(last)(**{**last.__dict__, "gone_since_s": NEG_NAN})  # a NaN with its sign bit set
    st_gone = loaded.memory.objects.to_state()[1]["obj/st_gone/data"]
    nan_bytes = {x.tobytes() for x in st_gone[np.isnan(st_gone)]}
    assert nan_bytes == {np.float64(np.nan).tobytes()}
    loaded.save(tmp_path / "b")
    assert differences(state(loaded), state(Agent.load(tmp_path / "b"))) == []


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the benchmark forks the saving process")
def test_the_crash_save_benchmark_loads_only_the_old_or_the_new_save(tmp_path):
    """``benchmarks/crash_save.py --trials 10``: a save killed at random moments leaves a whole save (~25 s)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "crash_save.py"), "--trials", "10",
                        "--dir", str(tmp_path)], capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    last = dict(kv.split("=") for kv in r.stdout.strip().splitlines()[-1].split())
    assert last == {"loaded_old_or_new": "10", "corrupt": "0", "mixed": "0"}, r.stdout
