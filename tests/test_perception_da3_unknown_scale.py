"""Answers resting on an unknown scale: perception marks frames that are not in metres (DA3 without
metric evidence), the agent remembers it, and answers stating or using lengths carry ``unknown_scale``."""
from __future__ import annotations

import dataclasses

from directme.agent import Agent
from directme.commands.doctor_checks import sample_frames
from directme.types import Flag, FramePerception


def _agent(metric: bool) -> Agent:
    agent = Agent({"query": {"embedder": "string"}})
    for f in sample_frames(4):
        inst = tuple(f.meta["instances"])
        agent.observe_perception(FramePerception(dataclasses.replace(f, meta={}), inst, "living room", metric=metric))
    return agent


def test_lengths_flagged_when_memory_scale_is_unknown() -> None:
    unknown, known = _agent(metric=False), _agent(metric=True)
    assert not unknown.scale_known and known.scale_known
    far = unknown.ask("How far is the sofa from me?")
    assert Flag.UNKNOWN_SCALE in far.flags and "unknown scale" in far.text
    assert Flag.UNKNOWN_SCALE not in known.ask("How far is the sofa from me?").flags
    where = unknown.ask("Where is the sofa now?", options=("in front of you", "behind you", "to your left",
                                                            "to your right"))
    assert "m away" in where.text and Flag.UNKNOWN_SCALE in where.flags  # a direction answer stating a length


def test_answers_without_lengths_are_not_flagged() -> None:
    from directme.agent import flag_unknown_scale
    from directme.types import Answer

    place = Answer(question="Which room am I in?", t_s=1.0, text="You are in the living room.")
    assert flag_unknown_scale(place, "place") is place
    walked = Answer(question="How far did I walk?", t_s=1.0, text="About 12 steps.")
    assert Flag.UNKNOWN_SCALE in flag_unknown_scale(walked, "my_trajectory").flags  # uses lengths, by its kind


def test_pipeline_passes_depth_pose_metric_flag_on() -> None:
    import numpy as np

    from directme.geometry import Intrinsics, Pose
    from directme.perception.base import DepthPose
    from directme.perception.pipeline import PerceptionPipeline

    class UpToScale:
        name = "up_to_scale"

        def push(self, frame):
            K = Intrinsics.from_fov(frame.shape_hw[1], frame.shape_hw[0], 60.0)
            return [(frame, DepthPose(np.ones(frame.shape_hw, np.float32), Pose.identity(), K, metric=False))]

        def flush(self):
            return []

        def reset(self):
            pass

    out = PerceptionPipeline(UpToScale()).process(sample_frames(1)[0])
    assert len(out) == 1 and out[0].metric is False


def test_unknown_scale_survives_save_and_load(tmp_path) -> None:
    unknown = _agent(metric=False)
    loaded = Agent.load(unknown.save(tmp_path / "unknown"))
    assert not loaded.scale_known
    assert Flag.UNKNOWN_SCALE in loaded.ask("How far is the sofa from me?").flags
    assert Agent.load(_agent(metric=True).save(tmp_path / "known")).scale_known
