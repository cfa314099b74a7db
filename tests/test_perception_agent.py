"""The Agent end to end with real perception backends (random weights) on a video file, an
RGB-D folder and the real 7-Scenes frames with given poses."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from directme.readers import open_reader

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def _agent(options: dict, backend: str = "pipeline"):
    from directme.agent import Agent

    return Agent({"perception": {"backend": backend, "options": options}})


def test_agent_on_real_seven_scenes_with_given_poses() -> None:
    folder = DATA / "sevenscenes-redkitchen"
    if not folder.exists():
        pytest.skip(f"shared data not available at {folder}")
    agent = _agent({"depth_pose": {"name": "given"}, "detector": None, "tracker": None,
                    "scene_tagger": {"name": "fallback"}})
    agent.observe_many(open_reader(folder, fps=2.0, max_frames=90))
    agent.flush()
    assert agent.latest_t == pytest.approx(75 / 30.0)  # frames 0, 15, ..., 75 at 2 fps of 30 Hz
    ans = agent.ask("Where is the sink now?", options=["in front of you", "behind you"])
    assert ans.t_s == pytest.approx(75 / 30.0) and ans.text


@pytest.mark.slow
def test_agent_on_video_with_da3_gdino_box(tmp_path: Path) -> None:
    av = pytest.importorskip("av")
    pytest.importorskip("depth_anything_3")
    pytest.importorskip("transformers")
    path = tmp_path / "walk.mp4"
    rng = np.random.default_rng(0)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=5)
        stream.width, stream.height, stream.pix_fmt = 80, 64, "yuv420p"
        for _ in range(20):
            img = rng.integers(0, 255, (64, 80, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    agent = _agent({"depth_pose": {"name": "da3", "preset": "da3-small", "weights": "random", "chunk_size": 3,
                                   "overlap": 1, "process_res": 56},
                    "detector": {"name": "grounding_dino", "weights": "random", "image_size": 64,
                                 "box_threshold": 0.0, "max_detections": 2},
                    "tracker": {"name": "box"}, "scene_tagger": {"name": "fallback"},
                    "vocabulary": ["sofa", "table"], "redetect_every": 2})
    frames = list(open_reader(path, fps=1.0))
    assert [f.t_s for f in frames] == pytest.approx([0.0, 1.0, 2.0, 3.0])
    agent.observe_many(frames)
    agent.flush()
    assert agent.latest_t == pytest.approx(3.0)
    ans = agent.ask("Where is the sofa?", options=["in front of you", "behind you"])
    assert ans.t_s == pytest.approx(3.0) and ans.text
