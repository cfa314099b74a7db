"""Bad input gets a clear InvalidInputError and leaves the memory exactly as it was."""
import dataclasses

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.geometry import Intrinsics
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.testing import Box, look_at, perceive, snapshot_facts
from directme.types import Frame, FramePerception, InstanceObservation

K = Intrinsics.from_fov(96, 72, 70.0)
SCENE = [Box(1, "box", (0.0, 0.0, 0.2), (0.4, 0.4, 0.4))]
POSE = look_at((2.0, 0.0, 1.2), (0.0, 0.0, 0.2))


@pytest.fixture()
def mem():
    m = SpatialMemory()
    m.update(perceive(SCENE, POSE, K, 1.0, 0))
    m.update(perceive(SCENE, POSE, K, 2.0, 1))
    return m


def _with_frame(fp: FramePerception, **changes) -> FramePerception:
    return dataclasses.replace(fp, frame=dataclasses.replace(fp.frame, **changes))


def _assert_rejected(mem, fp, match):
    before = snapshot_facts(mem.as_of(1e9))
    with pytest.raises(InvalidInputError, match=match):
        mem.update(fp)
    assert snapshot_facts(mem.as_of(1e9)) == before


def test_out_of_order_timestamp(mem):
    _assert_rejected(mem, perceive(SCENE, POSE, K, 1.5, 2), "non-decreasing")


def test_missing_pose_depth_intrinsics(mem):
    good = perceive(SCENE, POSE, K, 3.0, 2)
    _assert_rejected(mem, _with_frame(good, T_world_cam=None), "no camera pose")
    _assert_rejected(mem, _with_frame(good, depth_m=None), "no depth")


def test_mask_of_wrong_size(mem):
    good = perceive(SCENE, POSE, K, 3.0, 2)
    bad = dataclasses.replace(good, instances=(InstanceObservation(1, "box", 0.9, np.ones((10, 10), bool)),))
    _assert_rejected(mem, bad, "mask of instance 1")


def test_nan_depth(mem):
    good = perceive(SCENE, POSE, K, 3.0, 2)
    all_nan = np.full_like(good.frame.depth_m, np.nan)
    _assert_rejected(mem, _with_frame(good, depth_m=all_nan), "no valid pixel")
    inf = good.frame.depth_m.copy()
    inf[0, 0] = np.inf
    _assert_rejected(mem, _with_frame(good, depth_m=inf), "infinite")
    some_nan = good.frame.depth_m.copy()
    some_nan[::2] = np.nan  # NaN pixels are simply invalid
    mem.update(_with_frame(good, depth_m=some_nan))
    assert mem.as_of(1e9).objects["o0"].n_obs == 3


def test_not_a_frame_perception(mem):
    rgb = np.zeros((72, 96, 3), np.uint8)
    _assert_rejected(mem, Frame(3.0, rgb), "FramePerception")


def test_tiny_instances_are_skipped_not_stored(mem):
    good = perceive(SCENE, POSE, K, 3.0, 2)
    speck = np.zeros(K.shape_hw, bool)
    speck[0, 0] = True
    mem.update(dataclasses.replace(good, instances=good.instances + (InstanceObservation(9, "dust", 0.5, speck),)))
    assert [o.label for o in mem.as_of(1e9).objects.values()] == ["box"]


def test_config_validation():
    with pytest.raises(InvalidInputError, match="voxel_m"):
        MemoryConfig().replace(map__voxel_m=0)
    with pytest.raises(InvalidInputError, match="unknown MemoryConfig"):
        MemoryConfig.from_dict({"voxel": 1})
