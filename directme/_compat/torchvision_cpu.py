"""Make a CUDA build of torchvision importable on a CPU-only torch.

On CPU machines the registry's torchvision 0.28.0 is a CUDA build whose C++ ops
(`torchvision/_C.so`) cannot load against `torch 2.13.0+cpu`; `import torchvision`
then fails with "operator torchvision::nms does not exist", which breaks every
consumer (transformers, ultralytics, sam2, groundingdino, depth-anything-3).

`ensure_torchvision_importable()` defines pure-PyTorch `torchvision::nms` and
`torchvision::qnms` operators with `torch.library` BEFORE torchvision is imported,
and points `torchvision.ops.nms` (used by `batched_nms` too) at them. It is a no-op
on CUDA torch and wherever torchvision's own ops load.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

_STATE: dict[str, Any] = {"done": False, "patched": False, "lib": None}

_SCHEMA = "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"


def nms_reference(boxes: Any, scores: Any, iou_threshold: float) -> Any:
    """Greedy NMS in pure PyTorch with torchvision's CPU kernel semantics.

    Boxes are (N, 4) xyxy; a box is dropped when its IoU with a kept, higher-scoring
    box is > ``iou_threshold``. Returns int64 indices sorted by decreasing score.
    """
    import torch

    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.long, device=boxes.device)
    b = boxes.to(torch.float64)
    order = torch.sort(scores.to(torch.float64), descending=True, stable=True).indices
    x1, y1, x2, y2 = b.unbind(1)
    areas = (x2 - x1) * (y2 - y1)
    suppressed = torch.zeros(b.shape[0], dtype=torch.bool, device=b.device)
    keep = []
    order_list = order.tolist()
    for rank, i in enumerate(order_list):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[rank + 1:]
        if rest.numel() == 0:
            break
        w = (torch.minimum(x2[i], x2[rest]) - torch.maximum(x1[i], x1[rest])).clamp(min=0)
        h = (torch.minimum(y2[i], y2[rest]) - torch.maximum(y1[i], y1[rest])).clamp(min=0)
        inter = w * h
        iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[iou > iou_threshold]] = True
    return torch.tensor(keep, dtype=torch.long, device=boxes.device)


def _qnms(dets: Any, scores: Any, iou_threshold: float) -> Any:
    return nms_reference(dets.float(), scores.float(), iou_threshold)


def _torchvision_ops_load(torch: ModuleType) -> bool:
    """True when torchvision's compiled ops load here (then nothing needs patching)."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return False
    pkg = Path(list(spec.submodule_search_locations)[0])
    libs = sorted(pkg.glob("_C*.so")) + sorted(pkg.glob("_C*.pyd"))
    if not libs:
        return False
    try:
        torch.ops.load_library(str(libs[0]))
    except (OSError, RuntimeError, ImportError):
        return False
    return hasattr(torch.ops.torchvision, "nms")


def _op_exists(torch: ModuleType, name: str) -> bool:
    try:
        getattr(torch.ops.torchvision, name)
    except (AttributeError, RuntimeError):
        return False
    return True


def _register_ops(torch: ModuleType) -> None:
    lib = torch.library.Library("torchvision", "FRAGMENT")
    for name, fn in (("nms", nms_reference), ("qnms", _qnms)):
        if not _op_exists(torch, name):
            lib.define(name + _SCHEMA)
            lib.impl(name, fn, "CPU")
    _STATE["lib"] = lib  # keep the registrations alive


def _patch_torchvision_ops() -> None:
    """Point torchvision.ops.nms (and the module-level name batched_nms uses) at our op."""
    import torch
    import torchvision.ops
    import torchvision.ops.boxes as boxes_mod

    def nms(boxes, scores, iou_threshold):  # noqa: ANN001 - torchvision's signature
        if boxes.is_quantized:
            return torch.ops.torchvision.qnms(boxes.int_repr(), scores.int_repr(), float(iou_threshold))
        return torch.ops.torchvision.nms(boxes, scores, float(iou_threshold))

    nms.__doc__ = boxes_mod.nms.__doc__
    boxes_mod.nms = nms
    torchvision.ops.nms = nms
    _STATE["patched"] = True


def ensure_torchvision_importable() -> bool:
    """Make `import torchvision` work on CPU torch; return True when a patch was applied.

    Safe to call many times; a no-op when torch or torchvision is not installed, on
    CUDA torch, and when torchvision's compiled ops load.
    """
    if _STATE["done"]:
        return bool(_STATE["patched"])
    _STATE["done"] = True
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("torchvision") is None:
        return False
    import torch

    if torch.version.cuda is not None or _torchvision_ops_load(torch):
        return False
    tv = sys.modules.get("torchvision")
    if tv is not None and hasattr(tv, "ops"):
        return False  # imported fine before we were asked
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]  # a half-imported torchvision from an earlier failed import
    _register_ops(torch)
    _patch_torchvision_ops()
    return True


def import_torch_stack(module: str, extra: str = "perception", package: Optional[str] = None) -> ModuleType:
    """Import a torchvision consumer (transformers, ultralytics, sam2, ...) safely on CPU torch.

    Applies `ensure_torchvision_importable()` first, then imports like `directme._lazy.require`
    (clear "pip install directme[extra]" error when the package is missing).
    """
    ensure_torchvision_importable()
    from .._lazy import require

    return require(module, extra, package)


__all__ = ["ensure_torchvision_importable", "import_torch_stack", "nms_reference"]
