"""Data files shipped with directme (objects365.txt: the Objects365 class names, one per line).

A bottom-layer package (it imports nothing from directme), so any layer may read the files."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def objects365_labels() -> tuple[str, ...]:
    """The Objects365 class names in directme/data/objects365.txt (empty if the file is absent)."""
    try:
        text = resources.files(__name__).joinpath("objects365.txt").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return ()
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


__all__ = ["objects365_labels"]
