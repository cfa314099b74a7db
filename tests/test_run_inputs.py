"""`directme run` on inputs it cannot use as they are: frames without depth or pose get the error of
`directme.bench.models.require_depth_backend` (the one `directme eval` gives) before any model is built
or frame decoded, and a damaged video stops with the reader's error or, with --skip-corrupt, is read
around the damage with a warning."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from directme.bench.models import ModelSpec, require_depth_backend
from directme.cli import main
from directme.commands import run_source
from directme.errors import InvalidInputError
from directme.geometry import Intrinsics
from directme.types import Frame, FramePerception
from video_builders import damage, write_video


def _helper_message(source: str, config=None) -> str:
    with pytest.raises(InvalidInputError) as err:
        require_depth_backend(ModelSpec("agent", config=config), source)
    return str(err.value)


def test_video_without_a_depth_backend_gets_the_shared_error_before_decoding(tmp_path: Path, capsys) -> None:
    # damaged too: the depth check comes first, before any frame is decoded
    path = damage(write_video(tmp_path / "clip.mkv"), tmp_path / "walk.mkv", "garbage")
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    expected = _helper_message(f"the frames of {path} (a video file)")
    assert err == f"directme run: error: {expected}"
    assert "(the default)" in expected and "--config perception-da3-gdino-sam2 " in expected
    assert "--config smoke-random" in expected


def test_given_config_and_image_folder_get_the_same_error(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in range(2):
        Image.fromarray(np.full((32, 48, 3), 50 * i, np.uint8)).save(folder / f"{i:04d}.png")
    config = tmp_path / "given.yaml"
    config.write_text("perception:\n  backend: given\n")
    assert main(["run", str(folder), "--config", str(config), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert _helper_message(f"the frames of {folder} (an image folder)", str(config)) in err
    assert "(the default)" not in err


def test_rgbd_frames_without_poses_name_the_frame_and_the_odometry_preset(tmp_path: Path, capsys) -> None:
    (tmp_path / "rgb").mkdir()
    (tmp_path / "depth").mkdir()
    for i in range(2):
        Image.fromarray(np.full((48, 64, 3), 80, np.uint8)).save(tmp_path / f"rgb/{i}.png")
        Image.fromarray(np.full((48, 64), 5000, np.uint16)).save(tmp_path / f"depth/{i}.png")
    (tmp_path / "rgb.txt").write_text("".join(f"{i}.0 rgb/{i}.png\n" for i in range(2)))
    (tmp_path / "depth.txt").write_text("".join(f"{i}.0 depth/{i}.png\n" for i in range(2)))
    assert main(["run", str(tmp_path), "--quiet"]) == 2  # TUM layout without groundtruth.txt
    err = capsys.readouterr().err
    assert "rgb/0.png) has no camera pose" in err and "'rgbd' preset" in err and "docs/backends.md" in err


class _FlatPerception:
    """Stands in for a depth + pose model: a wall 2 m ahead, the camera at the origin."""

    def process(self, frame: Frame) -> list[FramePerception]:
        h, w = frame.shape_hw
        return [FramePerception(Frame(t_s=frame.t_s, rgb=frame.rgb, depth_m=np.full((h, w), 2.0, np.float32),
                                      T_world_cam=np.eye(4), intrinsics=Intrinsics.from_fov(w, h, 60.0),
                                      index=frame.index, source=frame.source))]

    def flush(self) -> list:
        return []

    def reset(self) -> None:
        pass


def test_damaged_video_stops_the_run_or_is_skipped_with_a_warning(tmp_path: Path, monkeypatch, capsys,
                                                                  caplog) -> None:
    import directme.agent

    monkeypatch.setattr(directme.agent, "build_perception", lambda cfg, episode=None: _FlatPerception())
    config = tmp_path / "rgbd.yaml"  # a depth + pose backend by name; _FlatPerception stands in for it
    config.write_text("perception:\n  backend: rgbd\n")
    path = damage(write_video(tmp_path / "clip.mkv"), tmp_path / "walk.mkv", "garbage")
    argv = ["run", str(path), "--config", str(config), "--fps", "0", "--quiet", "--ask", "Where am I?"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"video {path} is damaged at t=" in err and "--skip-corrupt" in err

    with caplog.at_level(logging.WARNING, logger="directme.readers.video"):
        assert main(argv + ["--skip-corrupt"]) == 0
    out = capsys.readouterr().out
    n = int(out.split("frames=")[1].split()[0])
    assert 30 < n < 40 and "answers=1" in out  # the frames around the damaged part
    assert caplog.records and all(str(path) in r.getMessage() for r in caplog.records)


def test_skip_corrupt_reaches_video_readers_only(tmp_path: Path) -> None:
    path = write_video(tmp_path / "clip.mp4", n=5)
    assert run_source.open_source(str(path), None, skip_corrupt=True).frames.on_corrupt == "skip"
    assert run_source.open_source(str(path), None).frames.on_corrupt == "error"
    folder = tmp_path / "imgs"
    folder.mkdir()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(folder / "0.png")
    assert run_source.open_source(str(folder), None, skip_corrupt=True).total == 1
