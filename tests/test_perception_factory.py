"""The one perception factory (directme.perception.build_perception): given, oracle (asked of the episode,
never imported from the simulator), pipeline presets and dicts, and its errors."""
from __future__ import annotations

import numpy as np
import pytest

import directme.agent
from directme.config import PerceptionConfig
from directme.errors import InvalidInputError
from directme.geometry import Intrinsics, Pose
from directme.perception import OracleEpisode, PerceptionPipeline, build_perception
from directme.perception.base import Perception
from directme.perception.given import GivenPerception
from directme.sim import OraclePerception, generate_episode
from directme.types import Frame, InstanceObservation


def test_the_agent_uses_the_perception_factory():
    assert directme.agent.build_perception is build_perception


def test_given_backend_passes_frames_and_their_instances_through():
    p = build_perception(PerceptionConfig(backend="given"))
    assert isinstance(p, GivenPerception) and isinstance(p, Perception)
    mask = np.zeros((4, 6), bool)
    mask[1:3, 1:3] = True
    inst = InstanceObservation(7, "cup", 0.9, mask)
    frame = Frame(t_s=1.0, rgb=np.zeros((4, 6, 3), np.uint8), depth_m=np.ones((4, 6), np.float32),
                  T_world_cam=Pose(np.eye(4)), intrinsics=Intrinsics(5.0, 5.0, 2.5, 1.5, 6, 4), index=0,
                  meta={"instances": (inst,), "scene_tag": "kitchen"})
    (fp,) = p.process(frame)
    assert fp.frame is frame and fp.instances == (inst,) and fp.scene_tag == "kitchen" and p.flush() == []
    with pytest.raises(InvalidInputError, match="InstanceObservation"):
        p.process(Frame(t_s=2.0, rgb=frame.rgb, index=1, meta={"instances": ("cup",)}))


def test_oracle_backend_asks_the_episode_for_its_perception():
    ep = generate_episode(seed=1, minutes=0.2, width=32, height=24, with_questions=False)
    assert isinstance(ep, OracleEpisode)
    p = build_perception(PerceptionConfig(backend="oracle", noise="realistic", seed=3), ep)
    assert isinstance(p, OraclePerception) and p.episode is ep and p.preset.name == "realistic" and p.seed == 3

    class Recording:  # any object offering oracle_perception is an episode for the factory
        def oracle_perception(self, noise="none", seed=0):
            return ("perception", noise, seed)

    assert build_perception(PerceptionConfig(backend="oracle", noise="none", seed=5), Recording()) == \
        ("perception", "none", 5)


def test_oracle_backend_errors_name_the_fix():
    with pytest.raises(InvalidInputError, match=r"replays a simulator episode: pass it as Agent\(config, episode="):
        build_perception(PerceptionConfig(backend="oracle"))
    with pytest.raises(InvalidInputError, match=r"\(dict\) has no oracle_perception\(noise=, seed=\).*directme.sim"):
        build_perception(PerceptionConfig(backend="oracle"), {"frames": []})


def test_other_backends_are_pipeline_presets_or_dicts():
    p = build_perception(PerceptionConfig(backend="pipeline", options={"depth_pose": {"name": "given"}}))
    assert isinstance(p, PerceptionPipeline) and p.detector is None
    assert isinstance(build_perception({"depth_pose": "given"}), PerceptionPipeline)
    with pytest.raises(InvalidInputError, match="unknown perception preset 'nope'"):
        build_perception(PerceptionConfig(backend="nope"))
    with pytest.raises(InvalidInputError, match="must be a dict"):
        build_perception(42)
