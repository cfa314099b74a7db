"""The truth-fed Grounding DINO stand-in through our own detector code: on frames of a simulator
episode, with the Objects365 vocabulary split into several prompts, every visible object gives
exactly one detection with its ground-truth label and box, although prompts holding similar labels
name it too."""
from __future__ import annotations

import numpy as np
import pytest

from directme.geometry import mask_box
from directme.perception.tracks import box_iou
from directme.sim import generate_episode
from directme.sim.catalog import objects365_labels, similar_labels
from directme.sim.truthfed import TruthSource

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FRAMES = (0, 3, 6, 9, 15, 18, 24)
MIN_PIXELS = 200  # objects this large in the 320 x 240 frame must be found (the stand-in's limit is lower)


@pytest.fixture(scope="module")
def episode():
    return generate_episode(seed=0, minutes=0.5)


def _detector(kind: str, image_size: int):
    if kind == "ida":
        pytest.importorskip("groundingdino")
        from directme.perception.grounding_dino_ida import GroundingDinoIdaDetector as cls
    else:
        from directme.perception.grounding_dino import GroundingDinoDetector as cls
    det = cls(weights="random", image_size=image_size)
    det.set_vocabulary(objects365_labels())
    return det


def _check(det, episode) -> None:
    from directme.sim.truthfed.grounding_dino import install

    assert len(det.prompts) >= 3
    chunk = {label: i for i, p in enumerate(det.prompts) for label, _ in p.spans}
    truth = TruthSource(episode)
    install(det, truth)
    found = named_elsewhere = 0
    for index in FRAMES:
        frame = episode.frame(index)
        truth.register(frame)
        dets = det.detect(frame.rgb)
        ids = frame.meta["instance_ids"]
        objects = {int(o): mask_box(ids == o) for o in np.unique(ids[ids > 0])}
        for d in dets:  # no detection without an object: the best-overlapping object has its label
            oid = max(objects, key=lambda o: box_iou(objects[o], d.box_xyxy))
            assert d.label == truth.label(oid), (index, d)
        for oid, box in objects.items():
            if (ids == oid).sum() < MIN_PIXELS:
                continue
            label = truth.label(oid)
            hits = [d for d in dets if box_iou(box, d.box_xyxy) >= 0.9]
            assert [d.label for d in hits] == [label], (index, label, box, dets)
            assert hits[0].score > det.box_threshold
            found += 1
            named_elsewhere += any(chunk[s] != chunk[label] for s in similar_labels(label))
    print(f"{det.name}: {found} objects found, {named_elsewhere} with a similar label in another prompt")
    assert found >= 12 and named_elsewhere >= 4  # similar labels in other prompts were suppressed into one


def test_truthfed_grounding_dino_one_detection_per_object(episode) -> None:
    _check(_detector("hf", 180), episode)  # 320 x 240 frames processed at 240 x 180: boxes are rescaled


@pytest.mark.slow
def test_truthfed_grounding_dino_ida_one_detection_per_object(episode) -> None:
    _check(_detector("ida", 300), episode)  # 400 x 300: upscaled


def test_truthfed_grounding_dino_batches_like_single_prompts(episode) -> None:
    """The stand-in's logits are seeded per frame and object: one forward for all prompts or one per
    prompt gives the same detections."""
    from directme.sim.truthfed.grounding_dino import install

    det = _detector("hf", 180)
    truth = TruthSource(episode)
    install(det, truth)
    truth.register(episode.frame(9))
    det.prompt_batch = 1
    single = det.detect(episode.frame(9).rgb)
    det.prompt_batch = 8
    assert [(d.label, d.score, d.box_xyxy) for d in det.detect(episode.frame(9).rgb)] == \
        [(d.label, d.score, d.box_xyxy) for d in single] and len(single) >= 2


def test_truthfed_grounding_dino_one_track_per_object_in_the_pipeline(episode) -> None:
    """Through the perception pipeline (given depth and poses, box tracker): one track per object."""
    from directme.perception import build_perception
    from directme.sim.truthfed.grounding_dino import install

    p = build_perception({"depth_pose": {"name": "given"}, "tracker": {"name": "box"}, "scene_tagger": None,
                          "detector": {"name": "grounding_dino", "weights": "random", "image_size": 180},
                          "redetect_every": 1, "vocabulary": "objects365"})
    truth = TruthSource(episode)
    install(p.detector, truth)
    for index in FRAMES:
        p.reset()  # the frames are seconds apart: no track carries over
        frame = episode.frame(index)
        truth.register(frame)
        (fp,) = p.process(frame) + p.flush()
        ids = frame.meta["instance_ids"]
        for oid in np.unique(ids[ids > 0]):
            if (ids == oid).sum() >= MIN_PIXELS:
                box = mask_box(ids == oid)
                tracks = [o for o in fp.instances if box_iou(box, o.box_xyxy) >= 0.5]
                assert [o.label for o in tracks] == [truth.label(int(oid))], (index, tracks)
