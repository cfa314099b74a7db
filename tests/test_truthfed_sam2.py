"""The SAM2 stream tracker with truth-fed networks on a simulator episode gives back the ground truth
through its own code: instance masks, one id per object, lost and re-found tracks."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sam2")

from directme.errors import InvalidInputError  # noqa: E402
from directme.perception.base import Detection  # noqa: E402
from directme.perception.sam2_tracker import Sam2StreamTracker  # noqa: E402
from directme.sim import generate_episode  # noqa: E402
from directme.sim.truthfed import TruthSource  # noqa: E402
from directme.sim.truthfed.sam2 import install  # noqa: E402

FIRST, LAST = 15, 45  # frames of the episode: objects leave the view and come back within max_lost
DETECT_EVERY = 3
MIN_PIXELS = 400  # objects the detector reports and whose masks are checked (full-resolution pixels)


def _gt_detections(ids: np.ndarray, truth: TruthSource) -> list[Detection]:
    dets = []
    for oid in np.unique(ids[ids > 0]):
        ys, xs = np.nonzero(ids == oid)
        if len(ys) >= MIN_PIXELS:
            box = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
            dets.append(Detection(box, truth.label(int(oid)), 0.9))
    return dets


@pytest.fixture(scope="module")
def run():
    episode = generate_episode(seed=0, minutes=1.0)
    truth = TruthSource(episode)
    tr = Sam2StreamTracker(weights="random", image_size=768, device="cpu")
    install(tr, truth)
    rows = []
    for frame in list(episode.frames())[FIRST:LAST]:
        truth.register(frame)
        ids = frame.meta["instance_ids"]
        dets = _gt_detections(ids, truth) if (frame.index - FIRST) % DETECT_EVERY == 0 else None
        rows.append((frame.index, ids, tr.update(frame, dets), set(tr._tracks)))
    return tr, truth, rows


def test_truthfed_sam2_masks_are_the_instances(run) -> None:
    _, _, rows = run
    ious = []
    for _, ids, obs, _ in rows:
        for o in obs:
            oid = np.bincount(ids[o.mask]).argmax()
            gt = ids == oid
            if gt.sum() >= MIN_PIXELS:
                ious.append((gt & o.mask).sum() / (gt | o.mask).sum())
    assert len(ious) >= 30 and min(ious) >= 0.9, (len(ious), min(ious))


def test_truthfed_sam2_one_id_per_object_lost_and_refound(run) -> None:
    tr, truth, rows = run
    object_of: dict[int, set] = {}
    frames_of: dict[int, list] = {}
    for index, ids, obs, _ in rows:
        for o in obs:
            object_of.setdefault(o.track_id, set()).add(int(np.bincount(ids[o.mask]).argmax()))
            frames_of.setdefault(o.track_id, []).append(index)
            assert o.label == truth.label(next(iter(object_of[o.track_id])))
    assert all(len(objs) == 1 for objs in object_of.values()), object_of
    tracked = [next(iter(objs)) for objs in object_of.values()]
    assert len(tracked) == len(set(tracked)) >= 8  # no object under two ids
    # every live track shows its object whenever enough of it is in view, and only then
    for tid, objs in object_of.items():
        oid = next(iter(objs))
        for index, ids, obs, live in rows:
            if index >= frames_of[tid][0] and tid in live:
                shown, area = tid in {o.track_id for o in obs}, int((ids == oid).sum())
                assert shown or area < MIN_PIXELS, (tid, oid, index, area)
                assert not shown or area > 0
    refound = [tid for tid, f in frames_of.items() if max(np.diff(f), default=1) >= 3]
    assert len(refound) >= 2, frames_of  # out of view for 2+ frames, found again under the same id
    for tid in refound:  # the identity lives in the track's memory: its object pointers
        out = tr._tracks[tid]["out"] if tid in tr._tracks else None
        if out is not None:
            ptr_ids = {int(e["obj_ptr"][0, 0]) for kind in out.values() for e in kind.values()}
            assert ptr_ids <= {0, next(iter(object_of[tid]))}


def test_truthfed_sam2_needs_the_tracker_and_a_registered_frame() -> None:
    episode = generate_episode(seed=0, minutes=0.1)
    truth = TruthSource(episode)
    with pytest.raises(InvalidInputError, match="Sam2StreamTracker"):
        install(object(), truth)
    tr = Sam2StreamTracker(weights="random", image_size=128, device="cpu")
    install(tr, truth)
    with pytest.raises(InvalidInputError, match="register"):
        tr.update(next(iter(episode.frames())), None)
