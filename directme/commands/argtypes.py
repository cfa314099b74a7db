"""Argument types and checks shared by the commands, so that `run` and `eval` refuse the same values the same
way (argparse prints ``error: argument --fps: ...`` and exits 2; a path is checked before any work starts)."""
from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Callable, Optional

from ..errors import InvalidInputError

MAX_FPS = 1000.0  # --fps above this is a typo (no camera stream is sampled faster)


def at_least(lo: int) -> Callable[[str], int]:
    """argparse type: an integer >= ``lo`` (``--limit -1`` would silently drop the last episode)."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if n < lo:
            raise argparse.ArgumentTypeError(f"must be >= {lo}, got {n}")
        return n
    return parse


def _real(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def fps(text: str) -> float:
    """argparse type: frames per second, a finite number in [0, MAX_FPS] (0 = every frame)."""
    if not 0 <= _real(text, "a number") <= MAX_FPS:
        raise argparse.ArgumentTypeError(f"must be in [0, {MAX_FPS:g}] frames per second (0 = all), got {text}")
    return float(text)


def rate_hz(text: str) -> float:
    """A frame rate in (0, MAX_FPS] (e.g. --source-fps: there is no 'all frames' here)."""
    if not 0 < _real(text, "a frame rate in Hz") <= MAX_FPS:
        raise argparse.ArgumentTypeError(f"must be a frame rate in (0, {MAX_FPS:g}] Hz, got {text}")
    return float(text)


def seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0."""
    if not 0 < _real(text, "a number of seconds") < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text}")
    return float(text)


def check_path(flag: str, value: Optional[Any], is_dir: bool) -> Optional[Path]:
    """Refuse now an output path that could only fail later: empty, a directory where a file is written (or
    the reverse), or below a file. None passes (the option was not given)."""
    if value is None:
        return None
    if not str(value).strip():
        raise InvalidInputError(f"{flag}: an empty path; give a {'directory' if is_dir else 'file'}")
    p = Path(value)
    if not is_dir and p.is_dir():
        raise InvalidInputError(f"{flag} {p} is a directory; give a file in it, e.g. {p / 'out'}")
    if is_dir and p.exists() and not p.is_dir():
        raise InvalidInputError(f"{flag} {p} is a file; give a directory")
    blocker = next((q for q in p.parents if q.exists() and not q.is_dir()), None)
    if blocker is not None:
        raise InvalidInputError(f"{flag} {p}: {blocker} is a file, not a directory")
    return p
