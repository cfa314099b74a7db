"""The CPU torchvision shim: pure-PyTorch nms matches a brute-force reference and imports work."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from directme._compat.torchvision_cpu import ensure_torchvision_importable, import_torch_stack, nms_reference


def _brute_force_nms(boxes: np.ndarray, scores: np.ndarray, thr: float) -> list[int]:
    def iou(a, b):
        w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        inter = w * h
        return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)

    keep: list[int] = []
    for i in np.argsort(-scores, kind="stable"):
        if all(iou(boxes[i], boxes[k]) <= thr for k in keep):
            keep.append(int(i))
    return keep


def _random_boxes(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    xy = rng.uniform(0, 50, size=(n, 2))
    wh = rng.uniform(1, 30, size=(n, 2))
    return np.concatenate([xy, xy + wh], axis=1), rng.permutation(n).astype(np.float64) / n


@pytest.mark.parametrize("seed,n,thr", list(itertools.product([0, 1], [0, 1, 7, 80], [0.3, 0.7])))
def test_nms_reference_matches_brute_force(seed: int, n: int, thr: float) -> None:
    boxes, scores = _random_boxes(np.random.default_rng(seed), n)
    got = nms_reference(torch.as_tensor(boxes, dtype=torch.float32), torch.as_tensor(scores), thr)
    assert got.dtype == torch.long
    assert got.tolist() == _brute_force_nms(boxes.astype(np.float32).astype(np.float64), scores, thr)


def test_torchvision_imports_and_ops_agree_with_reference() -> None:
    ensure_torchvision_importable()
    tv = import_torch_stack("torchvision")
    from torchvision.ops import batched_nms, nms, roi_align

    boxes, scores = _random_boxes(np.random.default_rng(3), 60)
    b, s = torch.as_tensor(boxes, dtype=torch.float32), torch.as_tensor(scores, dtype=torch.float32)
    assert nms(b, s, 0.5).tolist() == _brute_force_nms(boxes.astype(np.float32).astype(np.float64), scores, 0.5)
    idx = torch.arange(60) % 3
    kept = batched_nms(b, s, idx, 0.5).tolist()
    expected = []
    for c in range(3):
        sel = np.nonzero(np.arange(60) % 3 == c)[0]
        expected += [int(sel[k]) for k in _brute_force_nms(boxes[sel].astype(np.float32).astype(np.float64),
                                                             scores[sel], 0.5)]
    assert sorted(kept) == sorted(expected)
    out = roi_align(torch.rand(1, 3, 16, 16), [torch.tensor([[0.0, 0.0, 8.0, 8.0]])], 4)
    assert out.shape == (1, 3, 4, 4)
    assert tv.__version__


def test_ensure_is_idempotent() -> None:
    first = ensure_torchvision_importable()
    assert ensure_torchvision_importable() == first
    if torch.version.cuda is not None:
        assert first is False
