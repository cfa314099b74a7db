"""Damaged inputs are never read silently: truncated or garbled videos (PyAV) and corrupt images in
image / RGB-D folders give errors naming the file, where it breaks and the fix; videos can instead
skip the damaged part with a logged warning (on_corrupt="skip")."""
from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from directme.errors import CorruptInputError, InvalidInputError
from directme.readers import open_reader
from video_builders import damage, write_video

N_FRAMES, FPS = 40, 10  # 4 s of 64 px frames
CONTAINERS = {"mkv": {}, "mp4": {"movflags": "faststart"}}  # faststart: the MP4 index comes first


def _write_video(path: Path, options: dict) -> Path:
    return write_video(path, N_FRAMES, FPS, options)


def _damaged(tmp_path: Path, ext: str, how: str) -> Path:
    return damage(_write_video(tmp_path / f"clip.{ext}", CONTAINERS[ext]), tmp_path / f"{how}.{ext}", how)


def _error_time(message: str) -> float:
    found = re.search(r"t=(\d+\.\d+) s", message)
    assert found, message
    return float(found.group(1))


@pytest.mark.parametrize("ext", sorted(CONTAINERS))
def test_intact_video_has_no_damage_and_no_warning(tmp_path: Path, ext: str, caplog) -> None:
    path = _write_video(tmp_path / f"clip.{ext}", CONTAINERS[ext])
    with caplog.at_level(logging.WARNING, logger="directme.readers.video"):
        reader = open_reader(path, fps=None)
        frames = list(reader)
    assert len(frames) == N_FRAMES and reader.damage == [] and not caplog.records
    assert frames[-1].t_s == pytest.approx((N_FRAMES - 1) / FPS)


@pytest.mark.parametrize("ext", sorted(CONTAINERS))
@pytest.mark.parametrize("how", ["truncated", "garbage"])
def test_damaged_video_raises_with_file_time_and_fix(tmp_path: Path, ext: str, how: str) -> None:
    path = _damaged(tmp_path, ext, how)
    frames = []
    with pytest.raises(CorruptInputError) as err:
        for frame in open_reader(path, fps=None):  # frames before the damage still arrive
            frames.append(frame)
    msg = str(err.value)
    assert str(path) in msg and "ffmpeg -i" in msg and "on_corrupt='skip'" in msg and "--skip-corrupt" in msg
    t_fail = _error_time(msg)
    assert 0.5 < t_fail < 3.5, msg  # the damage is in the middle of the 4 s stream
    assert 0 < len(frames) < N_FRAMES and frames[-1].t_s < t_fail
    if how == "truncated":
        assert "re-mux" in msg
    else:
        assert "re-encode" in msg


@pytest.mark.parametrize("ext", sorted(CONTAINERS))
def test_truncated_video_skip_mode_keeps_the_readable_part_with_a_warning(tmp_path: Path, ext: str,
                                                                          caplog) -> None:
    path = _damaged(tmp_path, ext, "truncated")
    with caplog.at_level(logging.WARNING, logger="directme.readers.video"):
        reader = open_reader(path, fps=None, on_corrupt="skip")
        frames = list(reader)
    assert 5 < len(frames) < N_FRAMES - 10
    (part,) = reader.damage
    assert frames[-1].t_s < part.start_s < 3.0 and part.end_s == pytest.approx(N_FRAMES / FPS, abs=0.11)
    (record,) = caplog.records
    assert str(path) in record.getMessage() and "skipped a damaged part" in record.getMessage()


@pytest.mark.parametrize("ext", sorted(CONTAINERS))
def test_garbled_video_skip_mode_drops_the_bad_part_and_goes_on(tmp_path: Path, ext: str, caplog) -> None:
    path = _damaged(tmp_path, ext, "garbage")
    with caplog.at_level(logging.WARNING, logger="directme.readers.video"):
        reader = open_reader(path, fps=None, on_corrupt="skip")
        frames = list(reader)
    times = np.array([f.t_s for f in frames])
    assert np.all(np.diff(times) > 0) and len(frames) < N_FRAMES
    assert times[-1] == pytest.approx((N_FRAMES - 1) / FPS)  # decoding went on after the damage
    assert reader.damage and len(caplog.records) == len(reader.damage)
    for part in reader.damage:
        assert 0.5 < part.start_s < part.end_s < 3.5
        assert not np.any((times >= part.start_s - 1e-6) & (times < part.end_s - 1e-6))  # no frame from it
    assert all(str(path) in r.getMessage() for r in caplog.records)


def test_gap_between_frames_is_damage_unless_skipped(tmp_path: Path, caplog) -> None:
    """Frames 1.5-2.9 s are missing (as when a demuxer skips unreadable data): an error, or a warning."""
    av = pytest.importorskip("av")
    from fractions import Fraction

    path = tmp_path / "gap.mkv"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        stream.codec_context.time_base = Fraction(1, FPS)
        for i in [*range(15), *range(30, 45)]:
            frame = av.VideoFrame.from_ndarray(np.full((64, 64, 3), i * 5, np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, FPS)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    with pytest.raises(CorruptInputError, match=r"gap\.mkv is damaged at t=1\.50 s: no frame from 1\.40 s to "
                                                r"3\.00 s.*copy or download it again.*on_corrupt='skip'"):
        list(open_reader(path, fps=None))
    with caplog.at_level(logging.WARNING, logger="directme.readers.video"):
        reader = open_reader(path, fps=None, on_corrupt="skip")
        assert len(list(reader)) == 30
    assert [(d.start_s, d.end_s) for d in reader.damage] == [pytest.approx((1.5, 3.0))] and len(caplog.records) == 1


def test_resampled_skip_mode_and_bad_option(tmp_path: Path) -> None:
    path = _damaged(tmp_path, "mkv", "garbage")
    frames = list(open_reader(path, fps=1.0, on_corrupt="skip"))
    assert [round(f.t_s) for f in frames] == [0, 1, 2, 3]  # 1 fps over the frames that decode
    with pytest.raises(InvalidInputError, match="on_corrupt"):
        open_reader(path, on_corrupt="ignore")


def test_mp4_truncated_before_its_index_cannot_be_opened(tmp_path: Path) -> None:
    path = _write_video(tmp_path / "clip.mp4", {})  # the index (moov) is written at the end
    bad = tmp_path / "cut.mp4"
    bad.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    for mode in ("error", "skip"):
        with pytest.raises(CorruptInputError, match=r"cut\.mp4 cannot be opened.*incomplete.*ffprobe"):
            list(open_reader(bad, on_corrupt=mode))


# ------------------------------------------------------------------ image and RGB-D folders

def _image(h: int = 48, w: int = 64, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, (h, w, 3), dtype=np.uint8)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_image_folder_corrupt_png_names_the_file(tmp_path: Path, damage: str) -> None:
    for i in range(4):
        Image.fromarray(_image(seed=i)).save(tmp_path / f"img{i}.png")
    bad = tmp_path / "img2.png"
    if damage == "truncated":
        _truncate(bad)
    else:  # the PNG chunk checksums catch it
        data = bytearray(bad.read_bytes())
        data[len(data) // 2:len(data) // 2 + 100] = bytes(100)
        bad.write_bytes(bytes(data))
    frames = []
    with pytest.raises(CorruptInputError, match=r"image .*img2\.png is corrupt.*delete it") as err:
        for frame in open_reader(tmp_path, fps=None):
            frames.append(frame)
    assert len(frames) == 2 and isinstance(err.value, InvalidInputError)


def _seven_scenes(folder: Path, n: int, depth_hw: tuple[int, int] = (48, 64)) -> None:
    for i in range(n):
        stem = folder / f"frame-{i:06d}"
        Image.fromarray(_image(seed=i)).save(f"{stem}.color.jpg", quality=90)
        Image.fromarray(np.full(depth_hw, 1500, np.uint16)).save(f"{stem}.depth.png")
        np.savetxt(f"{stem}.pose.txt", np.eye(4))
    np.savetxt(folder / "camera-intrinsics.txt", [[50, 0, 32], [0, 50, 24], [0, 0, 1]])


@pytest.mark.parametrize("part", ["color.jpg", "depth.png"])
def test_seven_scenes_truncated_frame_names_the_file_and_how_to_drop_it(tmp_path: Path, part: str) -> None:
    _seven_scenes(tmp_path, 3)
    _truncate(tmp_path / f"frame-000001.{part}")
    with pytest.raises(CorruptInputError, match=rf"frame-000001\.{part} is corrupt.*truncated.*"
                                                 r"delete frame-000001\.color\.jpg to drop the frame"):
        list(open_reader(tmp_path, fps=None))


def test_rgbd_depth_of_another_size_names_both_files(tmp_path: Path) -> None:
    _seven_scenes(tmp_path, 2, depth_hw=(24, 32))
    with pytest.raises(InvalidInputError, match=r"frame-000000\.depth\.png is 32x24 px but its colour image "
                                                r".*frame-000000\.color\.jpg is 64x48 px.*registered"):
        list(open_reader(tmp_path, fps=None))


def test_tum_corrupt_rgb_names_the_file_and_the_lists(tmp_path: Path) -> None:
    (tmp_path / "rgb").mkdir()
    (tmp_path / "depth").mkdir()
    for i in range(3):
        Image.fromarray(_image(seed=i)).save(tmp_path / f"rgb/{i}.png")
        Image.fromarray(np.full((48, 64), 5000, np.uint16)).save(tmp_path / f"depth/{i}.png")
    (tmp_path / "rgb.txt").write_text("".join(f"{10 + i * 0.1:.6f} rgb/{i}.png\n" for i in range(3)))
    (tmp_path / "depth.txt").write_text("".join(f"{10 + i * 0.1:.6f} depth/{i}.png\n" for i in range(3)))
    (tmp_path / "rgb" / "1.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    with pytest.raises(CorruptInputError, match=r"rgb/1\.png is corrupt.*delete its lines in rgb\.txt"):
        list(open_reader(tmp_path, fps=None))


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_truncated_image_is_refused_even_when_a_package_told_pillow_to_load_truncated_images(
        tmp_path: Path, damage: str, monkeypatch) -> None:
    """lmms-eval (and others) set PIL.ImageFile.LOAD_TRUNCATED_IMAGES = True at import; frames are still
    decoded strictly, and the process-wide setting is left as it was."""
    from PIL import ImageFile

    from directme.readers.images import read_rgb

    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    bad = tmp_path / "bad.png"
    Image.fromarray(_image(seed=0)).save(bad)
    if damage == "truncated":
        _truncate(bad)
    else:
        data = bytearray(bad.read_bytes())
        data[len(data) // 2:len(data) // 2 + 100] = bytes(100)
        bad.write_bytes(bytes(data))
    with pytest.raises(CorruptInputError, match="bad.png is corrupt"):
        read_rgb(bad)
    assert ImageFile.LOAD_TRUNCATED_IMAGES is True
