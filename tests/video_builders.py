"""Tiny videos for reader and CLI tests, written with PyAV, and ways to damage them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image


def write_video(path: Path, n: int = 40, fps: int = 10, options: dict | None = None) -> Path:
    """``n`` 64 px noise frames at ``fps`` (mpeg4): every frame is a few KB, so damage hits frame data.
    ``options`` go to the muxer (e.g. ``{"movflags": "faststart"}``: the MP4 index first)."""
    av = pytest.importorskip("av")
    rng = np.random.default_rng(0)
    with av.open(str(path), "w", options=options or {}) as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        for _ in range(n):
            img = rng.integers(0, 255, (64, 64, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def damage(src: Path, dst: Path, how: str) -> Path:
    """``dst``: ``src`` cut at half its size ("truncated"), or with 3000 random bytes written over its
    middle ("garbage")."""
    data = bytearray(src.read_bytes())
    mid = len(data) // 2
    if how == "truncated":
        del data[mid:]
    else:
        data[mid:mid + 3000] = np.random.default_rng(1).integers(0, 255, 3000, dtype=np.uint8).tobytes()
    dst.write_bytes(bytes(data))
    return dst


def seven_scenes_folder(folder: Path, n: int = 3) -> Path:
    """A tiny 7-Scenes-layout folder: ``n`` colour/depth/pose frames walking 0.2 m along x, and intrinsics."""
    folder.mkdir()
    for i in range(n):
        stem = folder / f"frame-{i:06d}"
        Image.fromarray(np.full((48, 64, 3), 40 * i, np.uint8)).save(f"{stem}.color.png")
        Image.fromarray(np.full((48, 64), 1500, np.uint16)).save(f"{stem}.depth.png")
        pose = np.eye(4)
        pose[0, 3] = 0.2 * i
        np.savetxt(f"{stem}.pose.txt", pose)
    np.savetxt(folder / "camera-intrinsics.txt", [[50, 0, 32], [0, 50, 24], [0, 0, 1]])
    return folder
