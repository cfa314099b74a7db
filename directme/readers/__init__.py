"""Frame sources: video files, image folders, RGB-D folders (7-Scenes, TUM), Aria VRS recordings
(a .vrs file, or an Aria recording folder: poses and ADT ground truth found beside it, aria_folder.py).

Every reader is an iterable of `directme.types.Frame` resampled to ``fps`` (1 fps by default,
``None`` = every frame), each frame keeping its exact source timestamp. ``estimated_frames()``
says how many frames it will yield, without decoding images (the `directme run` progress bar's ETA).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional, Union

from ..errors import InvalidInputError
from ..types import Frame

VIDEO_EXTS = (".mp4", ".mov", ".mkv", ".avi", ".webm", ".m4v", ".mpg", ".mpeg")


def open_reader(path: Union[str, Path], fps: Optional[float] = 1.0, **kwargs) -> Iterable[Frame]:
    """Pick the reader for ``path``: a video file, a .vrs recording, an Aria recording folder (ADT / AEA /
    MPS layout), a 7-Scenes or TUM RGB-D folder, or a plain image folder. ``kwargs`` go to the reader
    (e.g. ``trajectory=`` for Aria)."""
    p = Path(path)
    if not p.exists():
        raise InvalidInputError(f"input {p} does not exist")
    if p.is_file():
        if p.suffix.lower() == ".vrs":
            from .aria import AriaVrsReader

            return AriaVrsReader(p, fps=fps, **kwargs)
        if p.suffix.lower() in VIDEO_EXTS:
            from .video import VideoReader

            return VideoReader(p, fps=fps, **kwargs)
        raise InvalidInputError(f"{p}: unknown input type; give a video ({', '.join(VIDEO_EXTS)}), "
                                "a .vrs recording, or a folder of images / RGB-D frames")
    from .aria_folder import is_aria_folder

    if is_aria_folder(p):
        from .aria import AriaVrsReader

        return AriaVrsReader.from_folder(p, fps=fps, **kwargs)
    if any(p.glob("frame-*.color.*")):
        from .rgbd import SevenScenesReader

        return SevenScenesReader(p, fps=fps, **kwargs)
    if (p / "rgb.txt").exists() and (p / "depth.txt").exists():
        from .rgbd import TumRGBDReader

        return TumRGBDReader(p, fps=fps, **kwargs)
    from .images import ImageFolderReader

    return ImageFolderReader(p, fps=fps, **kwargs)


__all__ = ["open_reader", "VIDEO_EXTS"]
