"""The 'aria_gt' perception backend: an Aria recording's own poses, ground-truth depth and objects."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from directme.config import AgentConfig
from directme.errors import InvalidInputError
from directme.geometry import Intrinsics, Pose
from directme.perception import build_perception
from directme.perception.aria_gt import AriaGtConfig, AriaGtPerception, answerable, room_from_objects
from directme.types import Frame, FramePerception, InstanceObservation

K = Intrinsics(20.0, 20.0, 7.5, 5.5, 16, 12)


def _frame(depth: bool = True, pose: bool = True, labels: tuple[str, ...] = ()) -> Frame:
    mask = np.zeros((12, 16), bool)
    mask[3:6, 4:8] = True
    inst = tuple(InstanceObservation(i + 1, label, 1.0, mask) for i, label in enumerate(labels))
    return Frame(t_s=0.0, rgb=np.zeros((12, 16, 3), np.uint8), depth_m=np.full((12, 16), 2.0, np.float32) if depth
                 else None, T_world_cam=Pose(np.eye(4)) if pose else None, intrinsics=K, meta={"instances": inst})


def test_room_named_by_its_cue_objects() -> None:
    cfg = AriaGtConfig()
    assert room_from_objects(["refrigerator", "Cooktop", "cup"], cfg)[0] == "kitchen"
    assert room_from_objects(["refrigerator", "cup"], cfg) == (None, 0.0)  # one cue is not enough
    assert room_from_objects(["couch", "coffee table", "refrigerator"], cfg) == ("living room", 2 / 3)
    assert room_from_objects(["couch"], AriaGtConfig(min_room_votes=1))[0] == "living room"


def test_frames_with_ground_truth_pass_through_with_a_room() -> None:
    fp, = AriaGtPerception().process(_frame(labels=("refrigerator", "cooktop", "cup")))
    assert fp.scene_tag == "kitchen" and len(fp.instances) == 3 and np.all(fp.frame.depth_m == 2.0)
    fp.validate()


def test_poses_only_give_an_invalid_depth_and_no_objects() -> None:
    fp, = AriaGtPerception().process(_frame(depth=False))
    assert fp.frame.depth_m.shape == (12, 16) and not np.any(fp.frame.depth_m > 0)
    assert fp.instances == () and fp.scene_tag is None
    fp.validate()


def test_a_frame_without_pose_says_where_poses_come_from() -> None:
    with pytest.raises(InvalidInputError, match="closed_loop_trajectory.csv"):
        AriaGtPerception().process(_frame(pose=False))


def test_built_by_the_factory_from_an_agent_config() -> None:
    cfg = AgentConfig.from_dict({"perception": {"backend": "aria_gt", "options": {"min_room_votes": 1}}})
    p = build_perception(cfg.perception)
    assert isinstance(p, AriaGtPerception) and p.config.min_room_votes == 1
    with pytest.raises(InvalidInputError, match="unknown option"):
        build_perception(AgentConfig.from_dict({"perception": {"backend": "aria_gt", "options": {"x": 1}}}).perception)


def test_what_can_be_answered() -> None:
    assert "place" in answerable(True, True) and "object" in answerable(True, True)
    assert answerable(False, False).startswith("path questions") and "no room names" in answerable(False, False)


def test_memory_takes_declared_pose_only_frames_and_nothing_else_without_depth() -> None:
    from directme.memory import SpatialMemory

    mem, perception = SpatialMemory(), AriaGtPerception()
    for i in range(3):
        T = np.eye(4)
        T[0, 3] = 0.5 * i
        f = _frame(depth=False)
        fp, = perception.process(Frame(t_s=float(i), rgb=f.rgb, T_world_cam=Pose(T), intrinsics=K))
        mem.update(fp)
    assert len(mem.ego) == 3 and not mem.as_of(2.0).objects
    assert fp.frame.pose_only
    undeclared = FramePerception(dataclasses.replace(fp.frame, t_s=3.0, pose_only=False))
    with pytest.raises(InvalidInputError, match="no valid pixel"):
        mem.update(undeclared)
