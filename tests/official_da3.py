"""Our DA3 backend against the official ``DepthAnything3.inference`` with the same random weights:
the 3D points each one implies (depth back-projected through its intrinsics and placed by its pose)
must agree in the first camera's frame. Ours come at the input resolution with camera-to-world poses;
the official Prediction at DA3's processed resolution with world-to-camera extrinsics."""
from __future__ import annotations

import numpy as np
import pytest

from directme.types import Frame

torch = pytest.importorskip("torch")
pytest.importorskip("depth_anything_3")

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _plausible_camera_head(model, seed: int = 0) -> None:
    """Random weights give fields of view near 0 or 180 degrees, which our backend rightly replaces;
    shrink the camera head's last layers and bias them to ~60 degree views, distinct poses per view."""
    dec = model.model.cam_dec
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        dec.fc_fov[0].weight.mul_(0.01)
        dec.fc_fov[0].bias.copy_(torch.tensor([0.9, 1.1]))
        dec.fc_qvec.weight.copy_(torch.randn(dec.fc_qvec.weight.shape, generator=g) * 0.05)
        dec.fc_qvec.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 1.0]))
        dec.fc_t.weight.copy_(torch.randn(dec.fc_t.weight.shape, generator=g) * 0.05)


def _frames(n: int, hw: tuple[int, int]) -> list[Frame]:
    rng = np.random.default_rng(1)
    return [Frame(t_s=float(i), rgb=rng.integers(0, 255, (*hw, 3), dtype=np.uint8), index=i, source="tiny")
            for i in range(n)]


def _official_points(pred) -> tuple[np.ndarray, tuple[int, int]]:
    """(N, h, w, 3) points of the official Prediction in the first camera's frame, pixel (j, i) at (j, i)."""
    n, h, w = pred.depth.shape
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    E = np.tile(np.eye(4), (n, 1, 1))
    E[:, :3, :4] = np.asarray(pred.extrinsics, np.float64)[:, :3, :4]  # world-to-camera
    out = []
    for i in range(n):
        K = np.asarray(pred.intrinsics[i], np.float64)
        rays = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], -1)
        p_cam = rays * pred.depth[i][..., None]
        T_first_cam = E[0] @ np.linalg.inv(E[i])
        out.append(p_cam @ T_first_cam[:3, :3].T + T_first_cam[:3, 3])
    return np.stack(out), (h, w)


def _our_points(results, hw_p: tuple[int, int]) -> np.ndarray:
    """Our points at the processed pixels' centres, mapped to input pixels (pixel-centre convention),
    with our input-resolution depth sampled there; in the first camera's frame."""
    import cv2

    h_p, w_p = hw_p
    T0_inv = np.linalg.inv(results[0][1].T_world_cam.matrix)
    out = []
    for frame, dp in results:
        H, W = frame.shape_hw
        u_p, v_p = np.meshgrid(np.arange(w_p, dtype=np.float64), np.arange(h_p, dtype=np.float64))
        x, y = (u_p + 0.5) * W / w_p - 0.5, (v_p + 0.5) * H / h_p - 0.5
        d = cv2.remap(dp.depth_m.astype(np.float32), x.astype(np.float32), y.astype(np.float32), cv2.INTER_LINEAR)
        K = dp.intrinsics
        rays = np.stack([(x - K.cx) / K.fx, (y - K.cy) / K.fy, np.ones_like(x)], -1)
        T = T0_inv @ dp.T_world_cam.matrix
        out.append((rays * d[..., None]) @ T[:3, :3].T + T[:3, 3])
    return np.stack(out)


def _compare(hw: tuple[int, int], process_res: int, n: int = 4) -> tuple[np.ndarray, np.ndarray]:
    from directme.perception.da3 import DepthAnything3Backend, import_da3

    be = DepthAnything3Backend("da3-small", weights="random", chunk_size=n, overlap=1, process_res=process_res,
                               pose_source="model", fp32=True)
    _plausible_camera_head(be.model)
    official = import_da3().DepthAnything3(model_name="da3-small")
    official.load_state_dict(be.model.state_dict())
    official.eval()
    official.forward = lambda image, *a: official.model(image, *a)  # fp32: the CPU autocast is fp16
    frames = _frames(n, hw)
    ours = [r for f in frames for r in be.push(f)]
    assert [f.index for f, _ in ours] == list(range(n))  # one chunk: every frame out
    with torch.inference_mode():
        pred = official.inference([f.rgb for f in frames], process_res=process_res)
    p_off, hw_p = _official_points(pred)
    return _our_points(ours, hw_p), p_off


def _rel_err(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.norm(a - b, axis=-1) / np.linalg.norm(b, axis=-1)


def test_da3_matches_official_at_processed_resolution() -> None:
    """Input already at DA3's processed size (56 x 42): no resampling, so points agree to float error."""
    ours, official = _compare((42, 56), 56)
    assert official.shape == (4, 42, 56, 3)
    spread = np.linalg.norm(official - official.mean(axis=(1, 2), keepdims=True), axis=-1).mean()
    assert spread > 0.1  # the views see distinct, non-degenerate points
    err = _rel_err(ours, official)
    assert np.max(err) < 1e-3, f"max relative point error {np.max(err):.2e}"


def test_da3_matches_official_from_larger_input() -> None:
    """Input twice DA3's processed size: our intrinsics and depth at the input resolution must imply
    the official points (up to the bilinear resampling of depth)."""
    ours, official = _compare((84, 112), 56)
    assert official.shape == (4, 42, 56, 3)
    err = _rel_err(ours, official)
    assert np.median(err) < 2e-3 and np.max(err) < 2e-2, f"median {np.median(err):.2e}, max {np.max(err):.2e}"
