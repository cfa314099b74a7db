"""The ``device`` option of every model backend: ``auto`` (CUDA when available, else CPU, the default),
``cpu``, ``cuda``, ``cuda:N`` or ``mps``. ``check_device`` validates the text (no torch import, so a
config is checked when it loads); ``resolve_device`` turns ``auto`` into the device to use (imports torch)."""
from __future__ import annotations

import re

from ..errors import InvalidInputError

AUTO = "auto"
DEVICE_FORMS = "auto | cpu | cuda | cuda:N | mps"  # what the error message lists
_DEVICE = re.compile(r"^(auto|cpu|mps|cuda(:\d{1,2})?)$")


def check_device(device: object, where: str = "device") -> str:
    """``device`` itself when it is one of ``DEVICE_FORMS``, else InvalidInputError naming ``where``."""
    if not isinstance(device, str) or not _DEVICE.match(device):
        raise InvalidInputError(f"{where} must be one of {DEVICE_FORMS}, got {device!r:.60}")
    return device


def resolve_device(device: str = AUTO, where: str = "device") -> str:
    """The torch device for ``device``: ``auto`` gives ``cuda`` when torch sees a GPU, else ``cpu``."""
    check_device(device, where)
    if device != AUTO:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
