"""Image folders (one image per frame) and image decoding with clear errors."""
from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Iterator, Optional, Sequence, Union

import numpy as np

from ..errors import CorruptInputError, InvalidInputError
from ..geometry import Intrinsics
from ..types import Frame
from .resample import count_kept, resample

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
PathLike = Union[str, Path]
DROP_IMAGE = "re-export it from its source, or delete it to drop that frame"


def natural_key(path: Path) -> list:
    """Sort key treating digit runs as numbers (frame2 < frame10)."""
    return [int(s) if s.isdigit() else s for s in re.split(r"(\d+)", path.name)]


_STRICT_LOAD = threading.Lock()


def _open_image(path: Path, what: str, fix: str) -> np.ndarray:
    """Decode ``path`` fully, so a truncated or garbled file fails here (RGB, or the mode as stored). Pillow's
    process-wide ``ImageFile.LOAD_TRUNCATED_IMAGES`` (set to True by some packages at import, lmms-eval among
    them) is held False while the file is decoded, so a truncated frame is never read as a grey-filled one."""
    from PIL import Image, ImageFile, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            if ImageFile.LOAD_TRUNCATED_IMAGES:  # set by another package: held False (under a lock) while loading
                with _STRICT_LOAD:
                    before, ImageFile.LOAD_TRUNCATED_IMAGES = ImageFile.LOAD_TRUNCATED_IMAGES, False
                    try:
                        im.load()
                    finally:
                        ImageFile.LOAD_TRUNCATED_IMAGES = before
            else:
                im.load()
            return np.asarray(im.convert("RGB") if what == "image" else im).copy()
    except FileNotFoundError as exc:
        raise InvalidInputError(f"{what} {path} does not exist") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, ImportError) as exc:
        # ImportError: ultralytics patches Image.open to try pi_heif on unreadable files
        raise CorruptInputError(f"{what} {path} is corrupt, truncated or not an image ({exc}); {fix}") from exc


def read_rgb(path: PathLike, fix: str = DROP_IMAGE) -> np.ndarray:
    """Decode an image file to (H, W, 3) uint8 RGB; a corrupt file raises CorruptInputError naming it
    and ``fix``, a missing one InvalidInputError. (A JPEG with garbled but complete data decodes to
    garbled pixels: libjpeg only warns, and Pillow does not pass the warning on.)"""
    return _open_image(Path(path), "image", fix).astype(np.uint8, copy=False)


def read_depth_png(path: PathLike, depth_scale: float, fix: str = DROP_IMAGE) -> np.ndarray:
    """Decode a 16-bit depth PNG to float32 metres (value / depth_scale; 0 = invalid)."""
    if isinstance(depth_scale, bool) or not isinstance(depth_scale, (int, float)) or not 0 < depth_scale < 1e9:
        raise InvalidInputError(f"depth_scale must be a number > 0 (depth units per metre), got {depth_scale!r:.40}")
    raw = _open_image(Path(path), "depth image", fix)
    if raw.ndim != 2 or raw.dtype.kind not in "ui":
        raise InvalidInputError(f"depth image {path} must be single-channel integer (16-bit PNG), "
                                f"got shape {raw.shape} dtype {raw.dtype}")
    if raw.dtype.itemsize < 2:
        raise InvalidInputError(f"depth image {path} is 8-bit: depth PNGs must be 16-bit (units of 1/depth_scale m); "
                                "an 8-bit image has lost the depth range (a visualisation?): export the raw 16-bit "
                                "depth")
    return raw.astype(np.float32) / float(depth_scale)


def list_images(folder: PathLike, exts: Sequence[str] = IMAGE_EXTS) -> list[Path]:
    folder = Path(folder)
    if not folder.is_dir():
        raise InvalidInputError(f"image folder {folder} does not exist or is not a folder")
    files = sorted((p for p in folder.iterdir() if p.suffix.lower() in exts and p.is_file()), key=natural_key)
    if not files:
        raise InvalidInputError(f"image folder {folder} contains no images ({', '.join(exts)})")
    return files


class ImageFolderReader:
    """Frames from a folder of images, ordered by natural file-name order.

    The folder has no clock, so frame i is at ``i / source_fps`` seconds; ``fps`` resamples.
    """

    def __init__(self, folder: PathLike, fps: Optional[float] = 1.0, source_fps: float = 30.0,
                 intrinsics: Optional[Intrinsics] = None):
        if source_fps <= 0:
            raise InvalidInputError(f"source_fps must be > 0, got {source_fps}")
        self.folder = Path(folder)
        self.files = list_images(self.folder)
        self.fps, self.source_fps, self.intrinsics = fps, source_fps, intrinsics

    def estimated_frames(self) -> int:
        """Frames this reader yields (file i at i / source_fps, resampled to fps)."""
        return count_kept(np.arange(len(self.files)) / self.source_fps, self.fps)

    def __iter__(self) -> Iterator[Frame]:
        stamped = ((i / self.source_fps, (i, p)) for i, p in enumerate(self.files))
        for t_s, (i, path) in resample(stamped, self.fps):
            rgb = read_rgb(path)
            yield Frame(t_s=t_s, rgb=rgb, intrinsics=self.intrinsics, index=i, source=str(path))
