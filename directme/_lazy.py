"""Import optional heavy dependencies inside the code that needs them."""
from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingDependencyError

# Packages that import torchvision: on CPU torch they need the compat shim first.
_TORCHVISION_USERS = ("torchvision", "transformers", "ultralytics", "sam2", "groundingdino",
                      "depth_anything_3", "timm", "sentence_transformers")


def require(module: str, extra: str, package: str | None = None) -> ModuleType:
    """Import ``module`` or raise a clear "pip install directme[extra]" error.

    ``package`` is the PyPI name when it differs from the module name.
    """
    try:
        if module.split(".")[0] in _TORCHVISION_USERS:
            from ._compat.torchvision_cpu import ensure_torchvision_importable

            ensure_torchvision_importable()
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised only when missing
        pkg = package or module.split(".")[0]
        raise MissingDependencyError(
            f"'{module}' is needed here but could not be imported ({exc}). "
            f"Install it with: pip install 'directme[{extra}]' (package '{pkg}'), "
            f"or run `make setup` in a checkout."
        ) from exc
