"""Video files decoded with PyAV, resampled to the configured rate with exact timestamps.

Damage is never silent. A packet or frame FFmpeg flags as corrupt, a packet that fails to decode, a gap
between frames (over max(0.5 s, 5 frame periods): data the demuxer skipped) or a stream that ends well
before the duration its header declares (a truncated file) raises `CorruptInputError` naming the file,
the stream time and the fix; with ``on_corrupt="skip"`` the damaged part is skipped instead, with a
logged warning, and listed in ``reader.damage``. (Garbled data the decoder does not notice, or a single
lost frame, stays undetected: containers carry no checksums.)
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Union

import numpy as np

from .._lazy import require
from ..errors import CorruptInputError, InvalidInputError
from ..geometry import Intrinsics
from ..types import Frame, TextEnum
from .resample import RateSampler, count_kept

log = logging.getLogger(__name__)


class OnCorrupt(TextEnum):
    """What a video reader does at damage: raise CorruptInputError, or skip the damaged part (logged)."""

    ERROR = "error"
    SKIP = "skip"


ON_CORRUPT = tuple(c.value for c in OnCorrupt)  # ("error", "skip")
# how to repair each kind of damage ({path}, {stem}, {suffix} of the file)
REENCODE = ("re-encode it, which drops or conceals the damaged frames (`ffmpeg -i {path} -c:v libx264 -crf 18 "
            "{stem}-fixed.mp4`; a re-mux with `-c copy` keeps the damage)")
REMUX = ("copy or download it again, or re-mux the readable part so its header matches "
         "(`ffmpeg -i {path} -c copy {stem}-remuxed{suffix}`)")
RECOPY = "copy or download it again (lost data cannot be repaired; if the video really pauses there, skip it)"


@dataclass(frozen=True)
class Damage:
    """A damaged part of a video in stream seconds (as ``Frame.t_s``): ``end_s`` is the next good
    frame, or the declared end of a truncated stream; ``count`` bad packets / frames, the first ``reason``."""

    start_s: float
    end_s: float
    reason: str
    count: int = 1


@dataclass(frozen=True)
class _Header:
    """What the container header declares about the video stream (0 = not declared)."""

    rate: float
    duration_s: float
    frames: int
    start_s: float
    video_only_duration: bool  # False: the duration is the container's, which may include longer audio


def _read_header(container: Any, stream: Any) -> _Header:
    rate = float(stream.average_rate or stream.guessed_rate or 0)
    tb = stream.time_base
    start_s = float(stream.start_time * tb) if stream.start_time is not None and tb else 0.0
    duration_s, video_only = 0.0, True
    if stream.duration and tb:
        duration_s = float(stream.duration * tb)
    elif _parse_hms(stream.metadata.get("DURATION", "")) > 0:  # Matroska per-track tag
        duration_s = _parse_hms(stream.metadata["DURATION"])
    elif container.duration:
        duration_s, video_only = container.duration / 1e6, len(container.streams) == 1
    return _Header(rate, duration_s, int(stream.frames or 0), start_s, video_only)


def _parse_hms(text: str) -> float:
    """'HH:MM:SS.fffffffff' -> seconds (0.0 when it does not parse)."""
    try:
        h, m, s = text.strip().split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)
    except ValueError:
        return 0.0


class VideoReader:
    """Frames of the first video stream of a file; ``t_s`` = presentation time from the first frame.

    Only frames kept by the sampler are converted to RGB, so 1 fps over a 30 fps video is cheap, but
    every packet is decoded, so damage anywhere in the file is found. ``on_corrupt``: "error" (default)
    raises `CorruptInputError` at the first damage; "skip" drops damaged packets and frames, logs one
    warning per damaged part and records it in ``self.damage``.
    """

    def __init__(self, path: Union[str, Path], fps: Optional[float] = 1.0,
                 intrinsics: Optional[Intrinsics] = None, on_corrupt: str = OnCorrupt.ERROR):
        self.path = Path(path)
        if not self.path.is_file():
            raise InvalidInputError(f"video {self.path} does not exist")
        if on_corrupt not in ON_CORRUPT:
            raise InvalidInputError(f"on_corrupt must be one of {ON_CORRUPT}, got {on_corrupt!r}")
        self.fps, self.intrinsics, self.on_corrupt = fps, intrinsics, OnCorrupt(on_corrupt)
        self.damage: list[Damage] = []

    def _open(self) -> Any:
        av = require("av", "perception")
        try:
            return av.open(str(self.path))
        except (av.error.FFmpegError, OSError) as exc:
            raise CorruptInputError(
                f"video {self.path} cannot be opened ({exc}); the file is damaged or incomplete (an MP4 cut "
                f"short loses its index, which is written at the end) or not a video. Check it with "
                f"`ffprobe {self.path}`; copy or download it again, or re-encode it from the source") from exc

    def estimated_frames(self) -> Optional[int]:
        """Frames this reader will yield, from the container header (no decoding): the stream's frame
        count, or its duration times its average rate, resampled to fps. None when the header has neither."""
        with self._open() as container:
            if not container.streams.video:
                return None
            head = _read_header(container, container.streams.video[0])
        rate, duration_s = head.rate, head.duration_s
        n = head.frames or (int(round(duration_s * rate)) if rate > 0 else 0)
        if n > 0 and rate <= 0 < duration_s:  # a frame count without a rate: spread it over the duration
            rate = n / duration_s
        if n <= 0 or rate <= 0:
            return n if n > 0 and not self.fps else None
        return count_kept(np.arange(n) / rate, self.fps)

    def __iter__(self) -> Iterator[Frame]:
        av = require("av", "perception")
        self.damage = []
        with self._open() as container:
            if not container.streams.video:
                raise InvalidInputError(f"{self.path} has no video stream")
            stream = container.streams.video[0]
            head = _read_header(container, stream)
            yield from _Decode(self, av, container, stream, head)


class _Decode:
    """One pass over the packets of ``stream``: yields good frames, reports damage to the reader."""

    def __init__(self, reader: VideoReader, av: Any, container: Any, stream: Any, head: _Header):
        self.reader, self.av, self.container, self.stream, self.head = reader, av, container, stream, head
        self.path = reader.path
        self.period_s = 1.0 / head.rate if head.rate > 0 else 0.0
        self.max_gap_s = max(0.5, 5 * self.period_s)  # a longer gap between frames is damage
        self.t0: Optional[float] = None  # presentation time of the first good frame
        self.last_s: Optional[float] = None  # stream time of the latest good frame
        self.open: Optional[Damage] = None  # the damaged part being skipped
        self.n_decoded = 0

    def __iter__(self) -> Iterator[Frame]:
        sampler = RateSampler(self.reader.fps)
        for frame in self._good_frames():
            t_s = float(frame.time) - self.t0
            if self.open is None and self.last_s is not None and t_s - self.last_s > self.max_gap_s:
                self._damaged(self.last_s + self.period_s, f"no frame from {self.last_s:.2f} s to {t_s:.2f} s "
                              "(unreadable data the demuxer skipped, or a pause in the recording)", fix=RECOPY)
            self._close_damage(t_s)
            self.last_s = t_s
            if sampler.keep(t_s, f"video {self.path} frame {self.n_decoded - 1}"):
                yield Frame(t_s=t_s, rgb=frame.to_ndarray(format="rgb24"), intrinsics=self.reader.intrinsics,
                            index=self.n_decoded - 1, source=f"{self.path}#{self.n_decoded - 1}")
        self._check_end()
        self._close_damage(None)

    def _good_frames(self) -> Iterator[Any]:
        """Decoded frames that are not damaged, in presentation order; damage goes to `_damaged`."""
        packets = self.container.demux(self.stream)
        while True:
            try:
                packet = next(packets)
            except StopIteration:
                return
            except self.av.error.FFmpegError as exc:
                self._damaged(self._rel(None), f"the container cannot be read past this point ({exc})", fix=REMUX)
                return
            when = self._packet_time(packet)
            if getattr(packet, "is_corrupt", False):
                self._damaged(self._rel(when), "FFmpeg flags the packet as corrupt (a truncated or garbled packet)")
            try:
                frames = packet.decode()
            except self.av.error.FFmpegError as exc:
                self._damaged(self._rel(when), f"the packet does not decode ({exc})")
                continue
            for frame in frames:
                self.n_decoded += 1
                if frame.pts is None or frame.time is None:
                    raise CorruptInputError(f"video {self.path}: frame {self.n_decoded - 1} has no timestamp; "
                                            f"re-mux the file (`ffmpeg -i {self.path} -c copy fixed.mkv`)")
                if getattr(frame, "is_corrupt", False):  # absent in old PyAV: decode errors only
                    self._damaged(self._rel(float(frame.time)), "the frame decodes with errors (concealed)")
                    continue
                self.t0 = float(frame.time) if self.t0 is None else self.t0
                if self.last_s is not None and float(frame.time) - self.t0 <= self.last_s:
                    if self.reader.on_corrupt == OnCorrupt.SKIP:  # garbled timestamps: the frame cannot be placed
                        self._damaged(float(frame.time) - self.t0, "the frame's timestamp goes backwards")
                        continue
                yield frame

    def _packet_time(self, packet: Any) -> Optional[float]:
        ts = packet.pts if packet.pts is not None else packet.dts
        return float(ts * packet.time_base) if ts is not None and packet.time_base else None

    def _rel(self, t_abs: Optional[float]) -> float:
        """Stream seconds of an absolute time (unknown: just after the latest good frame)."""
        if t_abs is None:
            return (self.last_s or 0.0) + self.period_s
        return max(0.0, t_abs - (self.t0 if self.t0 is not None else self.head.start_s))

    def _damaged(self, t_s: float, reason: str, end_s: Optional[float] = None, fix: str = REENCODE) -> None:
        """Damage from ``t_s`` (to ``end_s``: the rest of the stream): raise, or open / extend a skipped part."""
        if self.reader.on_corrupt == OnCorrupt.ERROR:
            path = self.path
            raise CorruptInputError(
                f"video {path} is damaged at t={t_s:.2f} s: {reason}. Fix: "
                f"{fix.format(path=path, stem=path.stem, suffix=path.suffix)}; or skip the damaged part with a "
                f"logged warning: open_reader(..., on_corrupt='skip') or `directme run {path} --skip-corrupt`")
        if self.open is None:
            self.open = Damage(t_s, t_s if end_s is None else end_s, reason)
        else:
            end = max(self.open.end_s, t_s if end_s is None else end_s)
            self.open = Damage(self.open.start_s, end, self.open.reason, self.open.count + 1)

    def _close_damage(self, next_good_s: Optional[float]) -> None:
        if self.open is None:
            return
        part = self.open if next_good_s is None else Damage(self.open.start_s, next_good_s, self.open.reason,
                                                             self.open.count)
        self.reader.damage.append(part)
        self.open = None
        log.warning("video %s: skipped a damaged part, %.2f-%.2f s (%d bad packet(s)/frame(s); first: %s)",
                    self.path, part.start_s, part.end_s, part.count, part.reason)

    def _check_end(self) -> None:
        """Damage when the stream ends well before the end its header declares (a truncated file)."""
        head = self.head
        declared_s = head.duration_s if head.video_only_duration else 0.0
        if declared_s <= 0 and head.frames and self.period_s:
            declared_s = head.frames * self.period_s
        if declared_s <= 0:
            return
        end_s = declared_s - ((self.t0 - head.start_s) if self.t0 is not None else 0.0)  # in Frame.t_s time
        decoded_s = self.last_s + self.period_s if self.last_s is not None else 0.0
        if end_s - decoded_s > max(1.0, 5 * self.period_s):
            self._damaged(decoded_s, f"the stream ends at {decoded_s:.2f} s but its header declares "
                          f"{end_s:.2f} s (a truncated or damaged file)", end_s, fix=REMUX)
