"""`directme run` on Aria recordings with no model weights: ADT ground truth (depth, poses, instances)
answers place and path questions; an MPS closed-loop trajectory alone answers path questions."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from directme.cli import main

ARIA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "aria"
pytestmark = pytest.mark.skipif(not ARIA.is_dir(), reason=f"Aria test recordings not found at {ARIA}")
pytest.importorskip("projectaria_tools")
# weight-free everywhere: string label matching instead of a cached sentence embedder, geometric answers
NO_WEIGHTS = "perception: {backend: given}\nquery: {embedder: string}\nanswerer: {name: geometric}\n"


def _run(tmp_path: Path, capsys, folder: Path, *questions: str) -> tuple[list[dict], str]:
    (tmp_path / "cfg.yaml").write_text(NO_WEIGHTS)
    args = ["run", str(folder), "--fps", "0", "--config", str(tmp_path / "cfg.yaml"), "--quiet",
            "--out", str(tmp_path / "answers.json")]
    for q in questions:
        args += ["--ask", q]
    assert main(args) == 0
    return json.loads((tmp_path / "answers.json").read_text()), capsys.readouterr().out


def test_adt_answers_place_and_path_questions_without_weights(tmp_path: Path, capsys) -> None:
    if not (ARIA / "adt" / "depth_images.vrs").is_file():
        pytest.skip("ADT ground-truth depth not found")
    answers, out = _run(tmp_path, capsys, ARIA / "adt", "Where am I?", "What path did I take?",
                        "Which room was I in?")
    assert "perception: aria_gt" in out
    assert "poses: ADT ground-truth trajectory" in out and "depth: ADT ground truth" in out
    assert re.search(r"answers: path .*place .*object", out)
    place, path, room = answers
    assert place["text"] == "You are in the kitchen." and not place["abstained"] and place["confidence"] > 0.5
    assert path["text"].startswith("Your path: kitchen") and "walked" in path["text"] and not path["abstained"]
    assert "kitchen" in room["text"] and not room["abstained"]
    assert re.search(r"frames=2 .*objects=[1-9]\d*", out)  # GT instances became objects


def _mps_trajectory(path: Path, t0_s: float, t1_s: float, speed_m_s: float) -> None:
    """A straight walk along x at ``speed_m_s`` (MPS closed-loop CSV layout: world z up, 1 kHz in MPS; 100 Hz here)."""
    path.parent.mkdir(parents=True)
    lines = ["graph_uid,tracking_timestamp_us,utc_timestamp_ns,tx_world_device,ty_world_device,tz_world_device,"
             "qx_world_device,qy_world_device,qz_world_device,qw_world_device,gravity_x_world,gravity_y_world,"
             "gravity_z_world,quality_score"]
    for t in np.arange(t0_s, t1_s, 0.01):
        lines.append(f"g,{round(t * 1e6)},-1,{speed_m_s * (t - t0_s):.6f},0,1.6,0,0,0,1,0,0,-9.81,1")
    path.write_text("\n".join(lines) + "\n")


def test_mps_trajectory_alone_answers_path_questions(tmp_path: Path, capsys) -> None:
    """AEA ships no MPS trajectory: a synthetic one (1 m/s along x) stands in for it, to check the pose-only path."""
    vrs = ARIA / "aea" / "recording.vrs"
    if not vrs.is_file():
        pytest.skip("AEA recording not found")
    folder = tmp_path / "aea"
    folder.mkdir()
    (folder / "recording.vrs").symlink_to(vrs.resolve())
    _mps_trajectory(folder / "mps" / "slam" / "closed_loop_trajectory.csv", 86.30, 86.80, 1.0)
    (path, room), out = _run(tmp_path, capsys, folder, "What path did I take?", "Which room was I in?")
    assert "poses: MPS closed-loop trajectory" in out and "depth: none" in out and "no room names" in out
    walked = float(re.search(r"You walked ([\d.]+) m", path["text"]).group(1))
    assert not path["abstained"] and abs(walked - 0.35) < 0.06, path["text"]  # 8 frames over 0.35 s
    assert "no_places" in room["flags"]  # no depth, no objects: no room names, said so
    assert re.search(r"frames=8 .*objects=0 ", out)


def test_aria_without_poses_is_refused_with_the_fix(tmp_path: Path, capsys) -> None:
    if not (ARIA / "aea" / "recording.vrs").is_file():
        pytest.skip("AEA recording not found")
    assert main(["run", str(ARIA / "aea"), "--ask", "Where am I?", "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "closed_loop_trajectory.csv" in err and "--config" in err
