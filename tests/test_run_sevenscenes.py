"""`directme run` on real RGB-D frames with given poses (7-Scenes redkitchen, no object labels)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from directme.cli import main

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "sevenscenes-redkitchen"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"7-Scenes frames not found at {DATA}")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    pytest.importorskip("rerun")
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("run7s")
    rc = main(["run", str(DATA), "--max-frames", "8", "--ask", "Where is the fridge now?", "--at", "3",
               "--ask", "What path did I take?", "--rerun", str(out / "run.rrd"), "--report", str(out / "report"),
               "--report-maps", "2", "--out", str(out / "answers.json"), "--save", str(out / "mem"), "--quiet"])
    assert rc == 0
    return out


def test_object_answers_are_low_confidence_and_the_path_comes_from_the_poses(run_dir):
    fridge, path = json.loads((run_dir / "answers.json").read_text())
    assert (fridge["t_s"], path["t_s"]) == (3.0, 7.0)  # the second question is asked at the last frame
    assert fridge["confidence"] <= 0.1 and "no_evidence" in fridge["flags"]
    assert path["text"].startswith("You walked ") and "no_evidence" not in path["flags"]


def test_path_without_scene_tags_matches_the_ground_truth_poses(capsys):
    assert main(["run", str(DATA), "--fps", "1", "--ask", "What path did I take?", "--at", "30", "--quiet"]) == 0
    out = capsys.readouterr().out
    centres = np.array([np.loadtxt(DATA / f"frame-{30 * i:06d}.pose.txt")[:3, 3] for i in range(31)])
    walked = re.search(r"You walked (\d+\.\d) m in 30 s \(0-30 s\)", out)
    assert walked, out
    # ground-plane length <= 3-D length of the same 1 Hz samples; the camera mostly moves sideways
    assert 0.6 * np.linalg.norm(np.diff(centres, axis=0), axis=1).sum() <= float(walked.group(1)) <= \
        np.linalg.norm(np.diff(centres, axis=0), axis=1).sum() + 0.05
    assert "no places in memory" not in out and "no_evidence" not in out


def test_recording_has_camera_images_and_trajectory(run_dir):
    from directme.viz.rerun_log import read_rrd_column, read_rrd_entities

    ents = read_rrd_entities(run_dir / "run.rrd")
    for e in ("/world/camera", "/world/camera/image", "/world/camera/image/depth", "/world/trajectory", "/answers"):
        assert e in ents, e
    cams = read_rrd_column(run_dir / "run.rrd", "/world/camera", "Transform3D:translation")
    assert len(cams) == 8
    gt = np.loadtxt(DATA / "frame-000210.pose.txt")  # frame 7 s at 30 Hz -> index 210
    assert np.allclose(cams[-1][1][0], gt[:3, 3], atol=1e-5)


def test_report_draws_the_ground_truth_trajectory(run_dir):
    from PIL import Image

    from directme.viz.report import load_views

    views = load_views(run_dir / "report")
    assert len(views) == 4  # 2 maps + 2 questions
    last = next(v for v in views if "map" in v.path.name and "t000007.0s" in v.path.name)
    img = np.asarray(Image.open(last.path).convert("RGB")).astype(int)
    centres = np.array([np.loadtxt(DATA / f"frame-{30 * i:06d}.pose.txt")[:3, 3] for i in range(8)])
    for c, r in np.round(last.pixel_of(centres)).astype(int):
        patch = img[r - 2:r + 3, c - 2:c + 3]
        assert patch.min() < 120, (c, r)  # grey path / start square / black ego marker, never white
    assert (img.min(axis=2) > 245).mean() > 0.5  # mostly empty paper: nothing drawn at random


def test_resume_from_saved_memory_skips_seen_frames(run_dir, capsys):
    rc = main(["run", str(DATA), "--load", str(run_dir / "mem"), "--max-frames", "10", "--quiet",
               "--ask", "What path did I take?"])
    assert rc == 0
    assert "frames=2 " in capsys.readouterr().out


def test_question_between_frames_uses_the_frames_before_it(capsys):
    assert main(["run", str(DATA), "--max-frames", "6", "--ask", "What path did I take?", "--at", "3.5",
                 "--ask", "Where am I?", "--at", "60", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "[t=    3.0s] What path did I take?" in out  # frames at 0, 1, ... s: memory as of 3 s
    assert out.count("note:") == 1 and "t=60.0s is after the last frame (t=5.0s)" in out


def test_progress_bar_shows_total_rate_objects_and_eta(capsys):
    assert main(["run", str(DATA), "--fps", "2", "--max-frames", "200"]) == 0
    err = capsys.readouterr().err
    final = err.replace("\r", "\n").strip().splitlines()[-1]
    assert "67/67" in final and "frame/s" in final and "objects=0" in final, final  # 1000 frames at 30 Hz
    assert re.search(r"\d+/67 \[[\d:]+<[\d:]+", err), err[-500:]  # elapsed<ETA while running
