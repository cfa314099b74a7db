"""Keyframe choice per object (visibility and viewpoint diversity) and a bounded image store."""
from __future__ import annotations

import io
import math
from typing import Optional

import numpy as np

from .config import KeyframeConfig, MemoryConfig
from .buffers import LockedLazy
from .objects import KeyframeEntry, ObjectRecord
from .snapshot import KeyframeRef



def visibility_score(mask: np.ndarray, score: float, cfg: KeyframeConfig) -> float:
    """Detector score times how much of the image the object fills (``keyframes.full_area``: all of it), scaled
    by ``keyframes.border_scale`` when cut by the border (area counted on every second pixel)."""
    h, w = mask.shape
    area = float(_every_second_pixel(mask)) * 4.0 / (h * w)
    touches = mask[0].any() or mask[-1].any() or mask[:, 0].any() or mask[:, -1].any()
    return float(score) * min(1.0, area / cfg.full_area) * (cfg.border_scale if touches else 1.0)


def _every_second_pixel(mask: np.ndarray) -> int:
    """``np.count_nonzero(mask[::2, ::2])``: on a C-ordered boolean mask of even width, every second row read as
    little-endian pairs of pixels whose low byte is the even column's (a strided count is slower)."""
    if mask.dtype == bool and mask.ndim == 2 and mask.size and mask.shape[1] % 2 == 0 and mask.flags.c_contiguous:
        return int(np.count_nonzero(mask[::2].view("<u2") & 1))
    return int(np.count_nonzero(mask[::2, ::2]))


def _angle_deg(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    return math.degrees(math.acos(min(1.0, max(-1.0, dot))))


def consider_keyframe(rec: ObjectRecord, ref: KeyframeRef, view_dir: np.ndarray, cfg: MemoryConfig) -> list:
    """Maybe add ``ref`` to the object's keyframes; returns [(added entry or None), removed entries...].

    A candidate must be ``keyframes.min_gap_s`` from every kept keyframe. It is added while there is room
    if it shows a new viewpoint (or is much clearer than the nearest view); when full it replaces the
    keyframe adding least (visibility x angular novelty) if it adds clearly more.
    """
    if len(rec.keyframes) >= cfg.keyframes.max_log:
        return []
    vd = tuple(np.asarray(view_dir, dtype=np.float64).tolist())
    live = rec.live_keyframes()
    if any(abs(ref.t_s - k.ref.t_s) < cfg.keyframes.min_gap_s for k in live):
        return []
    new = KeyframeEntry(ref, vd, ref.t_s)
    if not live:
        rec.keyframes.append(new)
        return [new]
    angles = [_angle_deg(vd, k.view_dir) for k in live]
    nearest = min(range(len(angles)), key=angles.__getitem__)
    novel = angles[nearest] >= cfg.keyframes.min_angle_deg
    victim: Optional[KeyframeEntry] = None
    if len(live) < cfg.keyframes.max_per_object and novel:
        victim = None
    elif not novel:
        if ref.visibility < cfg.keyframes.clearer_ratio * live[nearest].ref.visibility + 1e-9:
            return []
        victim = live[nearest]
    else:
        def worth(i: int, dirs: list) -> float:
            others = [_angle_deg(dirs[i], d) for j, d in enumerate(dirs) if j != i]
            return dirs_vis[i] * min(others)
        dirs = [k.view_dir for k in live] + [vd]
        dirs_vis = [k.ref.visibility for k in live] + [ref.visibility]
        worths = [worth(i, dirs) for i in range(len(dirs))]
        weakest = min(range(len(live)), key=worths.__getitem__)
        if worths[-1] < cfg.keyframes.replace_ratio * worths[weakest] + 1e-9:
            return []
        victim = live[weakest]
    if victim is not None:
        victim.removed_s = ref.t_s
    rec.keyframes.append(new)
    return [new] + ([victim] if victim is not None else [])


class ImageStore(LockedLazy):
    """Downsampled JPEG images of frames that are (or were) some object's live keyframe.

    An image is dropped when no live keyframe refers to it any more, so the store is bounded by
    objects x keyframes per object; views of the past may then find no image (None). A new keyframe's frame
    is held as a copy and JPEG-encoded when first read or saved, or when the copies held exceed
    ``pending_bytes`` (oldest first): a keyframe replaced before then (a clearer view came) is never encoded.
    The bytes are those of an encode at once (the same frame, the same encoder).
    """

    def __init__(self, max_side: int, quality: int, pending_bytes: int = 0) -> None:
        self.max_side, self.quality, self.pending_bytes = int(max_side), int(quality), int(pending_bytes)
        self._images: dict[int, bytes] = {}
        self.pending: dict[int, np.ndarray] = {}  # frame index -> RGB copy not encoded yet (oldest first)
        self._held = 0  # bytes of the copies in ``pending``
        self.refs: dict[int, int] = {}
        self._init_lock()  # readers (several at once) may encode a pending image

    @property
    def images(self) -> dict[int, bytes]:
        """Every stored image as JPEG bytes, by frame index (the held copies encoded now)."""
        with self._lock:
            while self.pending:
                self._encode_held(next(iter(self.pending)))
        return self._images

    @images.setter
    def images(self, images: dict[int, bytes]) -> None:
        with self._lock:
            self._images, self.pending, self._held = images, {}, 0

    def encode(self, rgb: np.ndarray) -> bytes:
        from PIL import Image

        img = Image.fromarray(rgb)
        scale = self.max_side / max(img.size)
        if scale < 1:
            size = (max(1, round(img.size[0] * scale)), max(1, round(img.size[1] * scale)))
            factor = int(1.0 / scale + 1e-9)
            if factor >= 2:  # integer box reduction first: ~6x cheaper than a full bilinear resize
                img = img.reduce(factor)
            if img.size != size:
                img = img.resize(size, Image.BILINEAR)
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=self.quality)
        return buf.getvalue()

    def _encode_held(self, idx: int) -> None:
        """Encode the held copy of frame ``idx`` (in ``pending``) into the stored images."""
        held = self.pending.pop(idx)
        self._images[idx] = self.encode(held)
        self._held -= held.nbytes

    def acquire(self, frame_index: int, rgb: np.ndarray) -> None:
        with self._lock:
            if frame_index not in self._images and frame_index not in self.pending:
                held = np.array(rgb)  # a copy: the caller may reuse the frame's buffer
                self.pending[frame_index] = held
                self._held += held.nbytes
                while self._held > self.pending_bytes:
                    self._encode_held(next(iter(self.pending)))
            self.refs[frame_index] = self.refs.get(frame_index, 0) + 1

    def release(self, frame_index: int) -> None:
        with self._lock:
            n = self.refs.get(frame_index, 0) - 1
            if n <= 0:
                self.refs.pop(frame_index, None)
                self._images.pop(frame_index, None)
                held = self.pending.pop(frame_index, None)
                if held is not None:
                    self._held -= held.nbytes
            else:
                self.refs[frame_index] = n

    def get(self, frame_index: int) -> Optional[np.ndarray]:
        with self._lock:
            if frame_index in self.pending:
                self._encode_held(frame_index)
            data = self._images.get(frame_index)
        if data is None:
            return None
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
