"""Video files decoded with PyAV, resampled to the configured rate with exact timestamps."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Optional, Union

import numpy as np

from .._lazy import require
from ..errors import InvalidInputError
from ..geometry import Intrinsics
from ..types import Frame
from .resample import RateSampler, count_kept


class VideoReader:
    """Frames of the first video stream of a file; ``t_s`` = presentation time from the stream start.

    Only frames kept by the sampler are converted to RGB, so 1 fps over a 30 fps video is cheap.
    """

    def __init__(self, path: Union[str, Path], fps: Optional[float] = 1.0,
                 intrinsics: Optional[Intrinsics] = None):
        self.path = Path(path)
        if not self.path.is_file():
            raise InvalidInputError(f"video {self.path} does not exist")
        self.fps, self.intrinsics = fps, intrinsics

    def _open(self) -> Any:
        av = require("av", "perception")
        try:
            return av.open(str(self.path))
        except (av.error.FFmpegError, OSError) as exc:
            raise InvalidInputError(f"video {self.path} cannot be opened ({exc}); "
                                    "check the file is a complete video (e.g. `ffprobe` it) or re-encode it") from exc

    def estimated_frames(self) -> Optional[int]:
        """Frames this reader will yield, from the container header (no decoding): the stream's frame
        count, or its duration times its average rate, resampled to fps. None when the header has neither."""
        with self._open() as container:
            if not container.streams.video:
                return None
            stream = container.streams.video[0]
            rate = float(stream.average_rate or stream.guessed_rate or 0)
            duration_s = (float(stream.duration * stream.time_base) if stream.duration and stream.time_base
                          else container.duration / 1e6 if container.duration else 0.0)
            n = int(stream.frames) or (int(round(duration_s * rate)) if rate > 0 else 0)
        if n > 0 and rate <= 0 < duration_s:  # a frame count without a rate: spread it over the duration
            rate = n / duration_s
        if n <= 0 or rate <= 0:
            return n if n > 0 and not self.fps else None
        return count_kept(np.arange(n) / rate, self.fps)

    def __iter__(self) -> Iterator[Frame]:
        av = require("av", "perception")
        container = self._open()
        with container:
            if not container.streams.video:
                raise InvalidInputError(f"{self.path} has no video stream")
            stream = container.streams.video[0]
            sampler = RateSampler(self.fps)
            t0: Optional[float] = None
            i = -1
            try:
                for frame in container.decode(stream):
                    i += 1
                    if frame.pts is None or frame.time is None:
                        raise InvalidInputError(f"video {self.path}: frame {i} has no timestamp; re-mux the file")
                    t0 = float(frame.time) if t0 is None else t0
                    t_s = float(frame.time) - t0
                    if not sampler.keep(t_s, f"video {self.path} frame {i}"):
                        continue
                    yield Frame(t_s=t_s, rgb=frame.to_ndarray(format="rgb24"), intrinsics=self.intrinsics,
                                index=i, source=f"{self.path}#{i}")
            except av.error.FFmpegError as exc:
                raise InvalidInputError(f"video {self.path} is corrupt at frame {i + 1}: {exc}; "
                                        "re-encode it (ffmpeg -i in.mp4 out.mp4)") from exc
