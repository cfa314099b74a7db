"""The example scripts on a folder of (tiny, synthetic) videos plus annotations."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
ART = ROOT / "tests" / "artifacts" / "bench"


def _write_video(path: Path, seconds: int, fps: int = 4) -> None:
    av = pytest.importorskip("av")
    with av.open(str(path), "w") as c:
        s = c.add_stream("mpeg4", rate=fps)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        for i in range(seconds * fps):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), (7 * i) % 255, np.uint8), format="rgb24")
            for packet in s.encode(frame):
                c.mux(packet)
        for packet in s.encode():
            c.mux(packet)


def test_ucsbench_example_on_video_folder(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    _write_video(videos / "v1.mp4", 9)
    _write_video(videos / "v2.mp4", 4)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "eval_ucsbench.py"), "--videos", str(videos),
                           "--annotations", str(ART / "ucsbench_questions.jsonl"), "--out", str(out),
                           "--model", "scripted"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    v1 = json.loads((out / "predictions" / "v1.json").read_text())
    assert v1["status"] == "ok" and v1["frames_observed"] == 9 and len(v1["records"]) == 3
    assert "| overall |" in proc.stdout and (out / "metrics.md").is_file()


def test_video_file_or_folder_resolution(tmp_path):
    from directme.bench.annotations import BenchEpisode
    from directme.bench.runner import VideoFrames
    from directme.errors import InvalidInputError

    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    _write_video(nested / "clip7.mp4", 2)
    ep = BenchEpisode(episode_id="e", video="clip7", items=())
    assert VideoFrames(str(tmp_path)).resolve(ep) == nested / "clip7.mp4"  # by name, anywhere below
    assert VideoFrames(str(nested / "clip7.mp4")).resolve(BenchEpisode("x", "other", ())) == nested / "clip7.mp4"
    assert [f.t_s for f in VideoFrames(str(tmp_path), fps=1.0)(ep)] == [0.0, 1.0]
    with pytest.raises(InvalidInputError, match="not found"):
        VideoFrames(str(tmp_path)).resolve(BenchEpisode("y", "missing", ()))
