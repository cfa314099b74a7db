"""The Agent end to end on RGB-D folders (7-Scenes and TUM layouts) written from simulator frames:
RGB-D odometry is the pose source, open-vocabulary detectors with random weights find the objects."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from directme.readers import open_reader
from directme.sim import generate_episode

SEED, SECONDS, FPS, W, H = 1, 2.0, 10.0, 96, 72  # this stretch of seed 1 walks 0.9 m, turning gently
VOCABULARY = ["sofa", "table", "chair"]
DETECTORS = {
    "grounding_dino": {"name": "grounding_dino", "weights": "random", "image_size": 64, "box_threshold": 0.0,
                       "max_detections": 3},
    "yolo_world": {"name": "yolo_world", "weights": "random", "imgsz": 96, "conf": 0.0, "max_detections": 3},
}


@pytest.fixture(scope="module")
def episode():
    return generate_episode(seed=SEED, minutes=SECONDS / 60, width=W, height=H, fps=FPS, with_questions=False)


def _depth_png(depth_m: np.ndarray, units_per_m: float) -> Image.Image:
    d = np.nan_to_num(depth_m, nan=0.0, posinf=0.0) * units_per_m
    return Image.fromarray(np.where(d < 65535, np.round(d), 0).astype(np.uint16))


def _seven_scenes(folder: Path, ep) -> dict:
    """frame-NNNNNN.color.png / .depth.png (mm) / .pose.txt and camera-intrinsics.txt."""
    for f in ep.frames():
        stem = folder / f"frame-{f.index:06d}"
        Image.fromarray(f.rgb).save(f"{stem}.color.png")
        _depth_png(f.depth_m, 1000.0).save(f"{stem}.depth.png")
        np.savetxt(f"{stem}.pose.txt", f.T_world_cam.matrix)
    np.savetxt(folder / "camera-intrinsics.txt", ep.intrinsics.K)
    return {"source_fps": FPS}


def _tum(folder: Path, ep) -> dict:
    """rgb.txt / depth.txt with absolute timestamps, depth in 1/5000 m, no groundtruth.txt."""
    (folder / "rgb").mkdir()
    (folder / "depth").mkdir()
    rgb, depth = [], []
    for f in ep.frames():
        t = 1305031100.0 + f.t_s
        Image.fromarray(f.rgb).save(folder / f"rgb/{t:.6f}.png")
        _depth_png(f.depth_m, 5000.0).save(folder / f"depth/{t + 0.005:.6f}.png")
        rgb.append(f"{t:.6f} rgb/{t:.6f}.png\n")
        depth.append(f"{t + 0.005:.6f} depth/{t + 0.005:.6f}.png\n")
    (folder / "rgb.txt").write_text("# timestamp filename\n" + "".join(rgb))
    (folder / "depth.txt").write_text("".join(depth))
    return {"intrinsics": ep.intrinsics}


def _angle_deg(R: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))


@pytest.mark.parametrize("layout, detector", [
    ("seven_scenes", "yolo_world"),
    pytest.param("tum", "grounding_dino", marks=pytest.mark.slow),  # ~10 s here: transformers import, warm-up
])
def test_agent_on_rgbd_folder_with_odometry_poses(tmp_path: Path, episode, layout: str, detector: str) -> None:
    pytest.importorskip("open3d")
    pytest.importorskip("transformers" if detector == "grounding_dino" else "ultralytics")
    from directme.agent import Agent

    reader_kw = (_seven_scenes if layout == "seven_scenes" else _tum)(tmp_path, episode)
    agent = Agent({"perception": {"backend": "pipeline", "options": {
        "depth_pose": {"name": "rgbd_odometry", "downsample": 1}, "detector": DETECTORS[detector],
        "tracker": {"name": "box"}, "scene_tagger": {"name": "fallback"}, "vocabulary": VOCABULARY,
        "redetect_every": 5}}})
    reader = open_reader(tmp_path, fps=None, **reader_kw)
    n = agent.observe_many(reader) + agent.flush()

    assert n == episode.n_frames == 20 and agent.latest_t == pytest.approx(SECONDS - 1 / FPS)
    snap = agent.memory.as_of(agent.latest_t)
    assert np.allclose(snap.ego.times_s, np.arange(n) / FPS)
    # the poses in memory are the odometry's: first camera = world origin, tracking the true motion
    gt = [f.T_world_cam.matrix for f in episode.frames()]
    gt = np.array([np.linalg.inv(gt[0]) @ g for g in gt])
    est = snap.ego.T_world_cam
    assert np.allclose(est[0], np.eye(4), atol=1e-9)
    assert np.linalg.norm(np.diff(gt[:, :3, 3], axis=0), axis=1).sum() > 0.8  # the wearer walked
    assert np.abs(est[:, :3, 3] - gt[:, :3, 3]).max() < 0.1
    assert max(_angle_deg(e[:3, :3].T @ g[:3, :3]) for e, g in zip(est, gt)) < 5.0

    assert snap.objects and {o.label for o in snap.objects.values()} <= set(VOCABULARY)
    label = next(iter(snap.objects.values())).label
    ans = agent.ask(f"Where is the {label}?", options=["in front of you", "behind you"])
    assert ans.t_s == pytest.approx(agent.latest_t) and ans.text and ans.letter in ("A", "B")
    assert "no_evidence" not in ans.flags
    turned = agent.ask("What path did I take?", t=0.9)  # memory as of 0.9 s: the wearer only turned
    walked = agent.ask("What path did I take?")  # then walked 0.9 m
    assert turned.t_s == 0.9 and turned.text.startswith("You stayed about where you were")
    found = re.match(r"You walked (\d+\.\d) m", walked.text)
    assert found and 0.6 <= float(found.group(1)) <= 1.1, walked.text
