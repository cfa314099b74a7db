"""The stream tracker computes what SAM2's official video predictor computes: same random weights,
same JPEG frames of a simulator episode, box prompts, masks compared frame by frame.

The official predictor runs as a stream would feed it: a box on frame 0, propagation up to the
frame before the next box, the next box (a frame not tracked yet: a new conditioning frame), and
propagation again. SAM2's hole filling is a CUDA kernel that the CPU install lacks (the predictor
then skips it); the official run gets a CPU connected-components function of the kernel's
definition (8-connectivity, component areas), so both sides fill holes.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sam2")
ndimage = pytest.importorskip("scipy.ndimage")

from PIL import Image  # noqa: E402

from directme.perception.base import Detection  # noqa: E402
from directme.perception.sam2_tracker import Sam2StreamTracker, fill_holes, size_overrides  # noqa: E402
from directme.sim import generate_episode  # noqa: E402
from directme.types import Frame  # noqa: E402

N_FRAMES = 24  # > max_obj_ptrs_in_encoder (16): late frames read pointers older than the mask memory
IMAGE_SIZE = 128
SEED = 1  # random weights whose masks on this video are neither empty nor full (checked below)
POINTER_SCALE = 10.0  # object pointers weigh more in the memory attention: pointers lost change the masks
REPROMPT_AT = 10


def _components(mask):
    """``sam2._C.get_connected_componnets`` on the CPU: 8-connected labels and each pixel's component area."""
    m = mask.to(torch.uint8).cpu().numpy()
    labels, areas = np.zeros(m.shape, np.int32), np.zeros(m.shape, np.int32)
    for i in np.ndindex(*m.shape[:2]):
        lab, _ = ndimage.label(m[i], structure=np.ones((3, 3)))
        count = np.bincount(lab.ravel())
        count[0] = 0
        labels[i], areas[i] = lab, count[lab]
    return torch.from_numpy(labels), torch.from_numpy(areas)


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    """A simulator episode's first frames as the predictor's JPEG folder, and the decoded frames."""
    folder = tmp_path_factory.mktemp("jpeg")
    episode = generate_episode(seed=0, minutes=0.5)
    frames = []
    for i, frame in zip(range(N_FRAMES), episode.frames()):
        path = folder / f"{i:05d}.jpg"
        Image.fromarray(frame.rgb).save(path, quality=95)
        frames.append(Frame(t_s=float(i), rgb=np.asarray(Image.open(path).convert("RGB")), index=i, source="jpeg"))
    ids = next(iter(episode.frames())).meta["instance_ids"]
    ys, xs = np.nonzero(ids == 10)  # the bed at the bottom right of frame 0
    return folder, frames, (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


def _tracker() -> Sam2StreamTracker:
    torch.manual_seed(SEED)
    tr = Sam2StreamTracker(weights="random", image_size=IMAGE_SIZE, device="cpu", max_lost=N_FRAMES, min_mask_pixels=0)
    head = tr.model.sam_mask_decoder.pred_obj_score_head
    torch.nn.init.constant_(head.layers[-1].bias, 10.0)  # random weights: the object is present on every frame
    with torch.no_grad():
        tr.model.obj_ptr_proj.layers[-1].weight.mul_(POINTER_SCALE)
        tr.model.obj_ptr_proj.layers[-1].bias.mul_(POINTER_SCALE)
    return tr


def _ours(tr: Sam2StreamTracker, frames, prompts: dict) -> list[np.ndarray]:
    """Track 1's mask per frame; a prompt given as None is the track's current box (a re-detection)."""
    masks = []
    for f in frames:
        if f.index in prompts and prompts[f.index] is None:
            prompts[f.index] = tr._tracks[1]["box"]
        tr.update(f, [Detection(prompts[f.index], "bed", 0.9)] if f.index in prompts else None)
        assert list(tr._tracks) == [1] and tr._tracks[1]["mask"] is not None
        masks.append(tr._tracks[1]["mask"])
    return masks


def _official(model, folder, prompts: dict, monkeypatch) -> list[np.ndarray]:
    import sam2.utils.misc
    from sam2.build_sam import build_sam2_video_predictor

    monkeypatch.setattr(sam2.utils.misc, "get_connected_components", _components)
    pred = build_sam2_video_predictor("configs/sam2.1/sam2.1_hiera_t.yaml", None, device="cpu",
                                      hydra_overrides_extra=size_overrides(IMAGE_SIZE))
    pred.load_state_dict(model.state_dict())
    state = pred.init_state(str(folder))
    starts = sorted(prompts) + [N_FRAMES]
    masks = []
    for start, stop in zip(starts[:-1], starts[1:]):
        pred.add_new_points_or_box(state, start, 1, box=np.asarray(prompts[start], np.float32))
        for index, _, logits in pred.propagate_in_video(state, start_frame_idx=start,
                                                        max_frame_num_to_track=stop - 1 - start):
            assert index == len(masks)
            masks.append((logits[0, 0] > 0).numpy())
    return masks


def _compare(official: list[np.ndarray], ours: list[np.ndarray]) -> None:
    fractions = np.array([m.mean() for m in official])
    assert len(official) == len(ours) == N_FRAMES
    assert fractions.min() > 0.02 and fractions.max() < 0.98, fractions  # masks are not degenerate
    ious = np.array([(a & b).sum() / (a | b).sum() for a, b in zip(official, ours)])
    assert ious.min() >= 0.99, np.round(ious, 4)


@pytest.mark.slow
def test_sam2_matches_official_box_on_first_frame(video, monkeypatch) -> None:
    folder, frames, box = video
    tr = _tracker()
    ours = _ours(tr, frames, {0: box})
    _compare(_official(tr.model, folder, {0: box}, monkeypatch), ours)


@pytest.mark.slow
def test_sam2_matches_official_reprompt_mid_video(video, monkeypatch) -> None:
    folder, frames, box = video
    tr = _tracker()
    prompts = {0: box, REPROMPT_AT: None}
    ours = _ours(tr, frames, prompts)
    assert REPROMPT_AT in tr._tracks[1]["out"]["cond_frame_outputs"]
    _compare(_official(tr.model, folder, prompts, monkeypatch), ours)


def test_fill_holes_matches_sam2_definition() -> None:
    rng = np.random.default_rng(0)
    logits = torch.from_numpy(rng.normal(size=(2, 1, 32, 32)).astype(np.float32))
    labels, areas = _components(logits <= 0)
    expected = torch.where((labels > 0) & (areas <= 8), 0.1, logits)
    assert torch.equal(fill_holes(logits, 8), expected)
    assert int(((labels > 0) & (areas <= 8)).sum()) > 0  # the example has holes to fill
    assert torch.equal(fill_holes(logits, 0), logits)
