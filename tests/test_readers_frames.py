"""Frame readers: image folders, 7-Scenes / TUM RGB-D folders, PyAV videos, Aria VRS."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from directme.errors import InvalidInputError
from directme.readers import open_reader
from directme.readers.images import ImageFolderReader
from directme.readers.resample import count_kept, resample
from directme.readers.rgbd import SevenScenesReader, TumRGBDReader

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def _rgb(i: int, h: int = 48, w: int = 64) -> np.ndarray:
    return np.full((h, w, 3), (i * 10) % 255, dtype=np.uint8)


def test_image_folder_resampled(tmp_path: Path) -> None:
    for i in range(12):
        Image.fromarray(_rgb(i)).save(tmp_path / f"img{i}.png")
    frames = list(ImageFolderReader(tmp_path, fps=2.0, source_fps=5.0))
    assert [f.index for f in frames] == [0, 3, 5, 8, 10]
    assert [f.t_s for f in frames] == [0.0, 0.6, 1.0, 1.6, 2.0]
    assert frames[1].rgb[0, 0, 0] == 30
    (tmp_path / "img3.png").write_bytes(b"not a png")
    with pytest.raises(InvalidInputError, match="img3.png is corrupt"):
        list(open_reader(tmp_path, fps=2.0, source_fps=5.0))


def _seven_scenes(folder: Path, n: int) -> None:
    for i in range(n):
        stem = folder / f"frame-{i:06d}"
        Image.fromarray(_rgb(i, 48, 64)).save(f"{stem}.color.png")
        depth = np.full((48, 64), 1500, dtype=np.uint16)
        depth[0, 0] = 65535
        Image.fromarray(depth).save(f"{stem}.depth.png")
        m = np.eye(4)
        m[0, 3] = 0.1 * i
        np.savetxt(f"{stem}.pose.txt", m)
    np.savetxt(folder / "camera-intrinsics.txt", [[50, 0, 32], [0, 50, 24], [0, 0, 1]])


def test_seven_scenes_layout(tmp_path: Path) -> None:
    _seven_scenes(tmp_path, 4)
    frames = list(open_reader(tmp_path, fps=None))
    assert isinstance(open_reader(tmp_path), SevenScenesReader) and len(frames) == 4
    f = frames[2]
    assert f.depth_m.dtype == np.float32 and np.isclose(f.depth_m[5, 5], 1.5) and f.depth_m[0, 0] == 0
    assert np.isclose(f.T_world_cam.t[0], 0.2) and f.intrinsics.fx == 50 and f.intrinsics.shape_hw == (48, 64)
    assert np.isclose(f.t_s, 2 / 30.0)
    (tmp_path / "frame-000003.pose.txt").unlink()
    with pytest.raises(InvalidInputError, match="frame-000003.pose.txt"):
        list(SevenScenesReader(tmp_path, fps=None))


def _tum(tmp_path: Path, n: int, dt_s: float = 0.5) -> None:
    (tmp_path / "rgb").mkdir()
    (tmp_path / "depth").mkdir()
    rgb_lines, depth_lines, gt_lines = [], [], []
    for i in range(n):
        t = 100.0 + i * dt_s
        Image.fromarray(_rgb(i, 48, 64)).save(tmp_path / f"rgb/{t:.6f}.png")
        Image.fromarray(np.full((48, 64), 5000, np.uint16)).save(tmp_path / f"depth/{t + 0.01:.6f}.png")
        rgb_lines.append(f"{t:.6f} rgb/{t:.6f}.png")
        depth_lines.append(f"{t + 0.01:.6f} depth/{t + 0.01:.6f}.png")
        gt_lines.append(f"{t:.4f} {i} 0 0 0 0 0 1")
    (tmp_path / "rgb.txt").write_text("# rgb\n" + "\n".join(rgb_lines))
    (tmp_path / "depth.txt").write_text("\n".join(depth_lines))
    (tmp_path / "groundtruth.txt").write_text("\n".join(gt_lines))


def test_tum_layout(tmp_path: Path) -> None:
    _tum(tmp_path, 3)
    reader = open_reader(tmp_path, fps=None)
    assert isinstance(reader, TumRGBDReader)
    frames = list(reader)
    assert [f.t_s for f in frames] == [0.0, 0.5, 1.0]
    assert np.allclose(frames[2].depth_m, 1.0) and np.allclose(frames[2].T_world_cam.t, [2, 0, 0])
    assert frames[0].intrinsics.shape_hw == (48, 64)


def _write_video(path: Path, n: int, fps: int) -> None:
    """``n`` frames at ``fps``; .mkv containers store no frame count, only a duration."""
    av = pytest.importorskip("av")
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(n):
            for packet in stream.encode(av.VideoFrame.from_ndarray(_rgb(i * 3), format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def test_video_reader_1fps_exact_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    _write_video(path, 25, 10)
    frames = list(open_reader(path, fps=1.0))
    assert [f.index for f in frames] == [0, 10, 20]
    assert np.allclose([f.t_s for f in frames], [0.0, 1.0, 2.0])
    assert frames[0].rgb.shape == (48, 64, 3) and frames[0].rgb.dtype == np.uint8
    assert len(list(open_reader(path, fps=None))) == 25


def test_unreadable_video_names_file(tmp_path: Path) -> None:
    pytest.importorskip("av")
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(InvalidInputError, match="broken.mp4"):
        list(open_reader(bad))
    with pytest.raises(InvalidInputError, match="does not exist"):
        open_reader(tmp_path / "nope.mp4")


def test_real_seven_scenes_frames() -> None:
    folder = DATA / "sevenscenes-redkitchen"
    if not folder.exists():
        pytest.skip(f"shared data not available at {folder}")
    frames = list(SevenScenesReader(folder, fps=1.0, max_frames=61))
    assert len(frames) == 3 and frames[1].index == 30
    f = frames[0]
    assert f.rgb.shape == (480, 640, 3) and f.intrinsics.fx == 585.0
    valid = f.depth_m[f.depth_m > 0]
    assert 0.3 < np.median(valid) < 4.0


def test_real_aria_vrs() -> None:
    vrs = DATA / "aria" / "adt" / "video.vrs"
    if not vrs.exists():
        pytest.skip(f"shared data not available at {vrs}")
    pytest.importorskip("projectaria_tools")
    frames = list(open_reader(vrs, fps=None, trajectory=vrs.parent / "aria_trajectory.csv", out_size=256))
    assert len(frames) == 3 and frames[0].t_s == 0.0 and frames[1].t_s > 0
    assert frames[0].rgb.shape == (256, 256, 3) and frames[0].T_world_cam is not None
    assert frames[0].intrinsics.shape_hw == (256, 256)


def _image_folder(folder: Path, n: int) -> None:
    for i in range(n):
        Image.fromarray(_rgb(i)).save(folder / f"img{i}.png")


@pytest.mark.parametrize("layout", ["images", "seven_scenes", "tum", "clip.mp4", "clip.mkv"])
@pytest.mark.parametrize("fps", [None, 0.7, 1.0, 3.0, 100.0])
def test_estimated_frames_match_the_frames_yielded(tmp_path: Path, layout: str, fps) -> None:
    """The progress bar's total (ETA) is each reader's frame count after resampling, read without decoding."""
    path = tmp_path / layout if "." in layout else tmp_path
    if layout == "images":
        _image_folder(tmp_path, 23)
    elif layout == "seven_scenes":
        _seven_scenes(tmp_path, 23)
    elif layout == "tum":
        _tum(tmp_path, 23, dt_s=0.033)
    else:
        _write_video(path, 25, 10)
    reader = open_reader(path, fps=fps, **({"source_fps": 10.0} if layout in ("images", "seven_scenes") else {}))
    assert reader.estimated_frames() == len(list(reader))


def test_count_kept_is_the_resampler_without_a_loop() -> None:
    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(1, 300))
        t = np.arange(n) / rng.choice([10, 29.97, 30]) if trial % 2 else np.cumsum(rng.uniform(0.001, 0.3, n))
        fps = rng.choice([None, 0.5, 1.0, 7.0, 60.0])
        assert count_kept(t, fps) == sum(1 for _ in resample(((x, None) for x in t), fps)), (trial, n, fps)


def test_real_data_estimates() -> None:
    folder, vrs = DATA / "sevenscenes-redkitchen", DATA / "aria" / "adt" / "video.vrs"
    if not folder.exists() or not vrs.exists():
        pytest.skip(f"shared data not available at {DATA}")
    pytest.importorskip("projectaria_tools")
    assert SevenScenesReader(folder, fps=1.0).estimated_frames() == 34  # 1000 frames at 30 Hz
    for fps in (None, 20.0):
        reader = open_reader(vrs, fps=fps, out_size=64)
        assert reader.estimated_frames() == len(list(reader))


def test_seven_scenes_rate_is_assumed_aloud_or_given(tmp_path: Path, caplog) -> None:
    _seven_scenes(tmp_path, 3)
    with caplog.at_level("WARNING", logger="directme.readers.rgbd"):
        assumed = SevenScenesReader(tmp_path, fps=None)
    assert "no timestamps" in caplog.text and "30 Hz" in caplog.text and assumed.source_fps == 30.0
    caplog.clear()
    with caplog.at_level("WARNING", logger="directme.readers.rgbd"):
        given = open_reader(tmp_path, fps=None, source_fps=15.0)
    assert "no timestamps" not in caplog.text and [f.t_s for f in given] == [0.0, 1 / 15, 2 / 15]
    with pytest.raises(InvalidInputError, match="source_fps must be > 0"):
        SevenScenesReader(tmp_path, source_fps=0.0)
