"""Round trips and bad-input errors of directme.geometry (and the frame types built on it)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from directme.errors import InvalidInputError
from directme.geometry import (DIRECTIONS_8, EgoFrame, Intrinsics, Pose, azimuth_deg, backproject, check_depth,
                               clock_hour, direction_word, ground_distance_m, lift_to_world, so3_exp)
from directme.types import Frame, Question


def _random_pose(rng):
    return Pose.from_Rt(so3_exp(rng.normal(size=3)), rng.normal(size=3) * 3)


def test_pose_inverse_and_compose():
    rng = np.random.default_rng(0)
    a, b, c = (_random_pose(rng) for _ in range(3))
    assert np.allclose((a @ a.inverse()).matrix, np.eye(4), atol=1e-12)
    assert np.allclose(((a @ b) @ c).matrix, (a @ (b @ c)).matrix)
    assert np.allclose((a @ b).inverse().matrix, (b.inverse() @ a.inverse()).matrix)
    p = rng.normal(size=(10, 3))
    assert np.allclose(a.inverse().apply(a.apply(p)), p)
    assert np.allclose((a @ b).apply(p), a.apply(b.apply(p)))
    assert Pose(a.matrix[:3]) == a and hash(Pose(a.matrix)) == hash(a)


def test_project_backproject_round_trip():
    K = Intrinsics(200.0, 210.0, 63.5, 47.5, 128, 96)
    rng = np.random.default_rng(1)
    depth = rng.uniform(0.5, 5.0, size=(96, 128)).astype(np.float32)
    pts = backproject(depth, K)
    uv, z = K.project(pts)
    vs, us = np.mgrid[0:96, 0:128]
    assert np.allclose(uv, np.stack([us.ravel(), vs.ravel()], 1), atol=1e-3)
    assert np.allclose(z, depth.ravel(), rtol=1e-6)
    mask = np.zeros((96, 128), bool)
    mask[10:20, 30:40] = True
    T = _random_pose(rng)
    world = lift_to_world(depth, K, T, mask)
    assert world.shape == (100, 3)
    assert np.allclose(T.inverse().apply(world)[:, 2], depth[mask], rtol=1e-6)
    depth[0, 0], depth[0, 1] = 0.0, np.nan  # invalid pixels are skipped
    assert len(backproject(depth, K)) == 96 * 128 - 2
    assert len(backproject(depth, K, stride=2)) == 48 * 64 - 1


def test_intrinsics_resized_and_cropped():
    K = Intrinsics.from_fov(320, 240, 70.0)
    half = K.resized(160, 120)
    assert (half.width, half.height) == (160, 120) and half.fx == pytest.approx(K.fx / 2)
    p = np.array([[0.3, -0.2, 2.0]])
    uv_full, _ = K.project(p)
    uv_half, _ = half.project(p)
    assert np.allclose((uv_half + 0.5) * 2 - 0.5, uv_full)  # pixel-centre convention
    back = half.resized(320, 240)
    assert np.allclose([back.fx, back.fy, back.cx, back.cy], [K.fx, K.fy, K.cx, K.cy])
    crop = K.cropped(40, 30, 200, 150)
    uv_crop, _ = crop.project(p)
    assert np.allclose(uv_crop, uv_full - [40, 30]) and crop.shape_hw == (150, 200)
    assert np.allclose(Intrinsics.from_K(K.K, 320, 240).K, K.K)
    with pytest.raises(InvalidInputError):
        K.cropped(300, 0, 100, 100)



def test_an_implausible_focal_length_names_the_image_side_it_was_checked_against():
    with pytest.raises(InvalidInputError, match=r"fx=1e\+08 px .* for an image 640 px wide"):
        Intrinsics(1e8, 500.0, 320.0, 240.0, 640, 480)
    with pytest.raises(InvalidInputError, match=r"fy=1e\+08 px .* for an image 480 px high"):
        Intrinsics(500.0, 1e8, 320.0, 240.0, 640, 480)

def test_direction_words_and_clock():
    assert [direction_word(a) for a in (0, 45, 90, 135, 180, -135, -90, -45)] == list(DIRECTIONS_8)
    assert direction_word(22.4) == "front" and direction_word(22.6) == "front-left" and direction_word(-179) == "behind"
    assert [clock_hour(a) for a in (0, -90, 180, 90, -30, 30)] == [12, 3, 6, 9, 1, 11]
    ego = EgoFrame.from_camera(Pose.from_Rt(np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], float), [1, 2, 1.6]),
                               np.array([0, 0, 1.0]))  # camera looking along world +x
    for world, word in (([3, 2, 0], "front"), ([1, 4, 1], "left"), ([1, 0, 2], "right"), ([-2, 2, 1], "behind"),
                        ([3, 4, 1], "front-left"), ([-1, 0, 1], "behind-right")):
        p = ego.to_ego(np.array([world], float))[0]
        assert direction_word(azimuth_deg(p)) == word
    assert ground_distance_m(ego.to_ego(np.array([[4.0, 6.0, 0.0]]))[0]) == pytest.approx(5.0)
    down = Pose.from_Rt(so3_exp(np.array([math.radians(-80), 0, 0])) @ np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], float),
                        [0, 0, 1.6])
    assert np.isfinite(EgoFrame.from_camera(down, np.array([0, 0, 1.0])).T_world_ego.matrix).all()


def test_bad_input_errors():
    bad = np.eye(4)
    bad[0, 3] = np.nan
    with pytest.raises(InvalidInputError, match="non-finite"):
        Pose(bad)
    with pytest.raises(InvalidInputError):
        Pose(np.eye(3))
    with pytest.raises(InvalidInputError, match="rotation"):
        Pose(np.diag([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(InvalidInputError):
        Intrinsics(float("nan"), 1.0, 0.0, 0.0, 10, 10)
    K = Intrinsics.from_fov(64, 48, 60.0)
    with pytest.raises(InvalidInputError, match="does not match"):
        check_depth(np.ones((48, 65)), K)
    with pytest.raises(InvalidInputError):
        backproject(np.ones((48, 64)), K, mask=np.ones((10, 10), bool))
    rgb = np.zeros((48, 64, 3), np.uint8)
    with pytest.raises(InvalidInputError, match="t_s"):
        Frame(t_s=-1.0, rgb=rgb)
    with pytest.raises(InvalidInputError, match="t_s"):
        Frame(t_s=float("inf"), rgb=rgb)
    with pytest.raises(InvalidInputError, match="depth shape"):
        Frame(t_s=0.0, rgb=rgb, depth_m=np.ones((10, 10)))
    with pytest.raises(InvalidInputError, match="intrinsics"):
        Frame(t_s=0.0, rgb=rgb, intrinsics=Intrinsics.from_fov(32, 24, 60.0))
    with pytest.raises(InvalidInputError):
        Frame(t_s=0.0, rgb=rgb, T_world_cam=bad)
    with pytest.raises(InvalidInputError):
        Question("q", -3.0, "Where?")


def test_nearest_approach_along_the_ground_over_a_time_window():
    from directme.geometry import nearest_ground_distance_m
    from directme.memory.snapshot import EgoTrack

    up = np.array([0.0, 0.0, 1.0])
    assert nearest_ground_distance_m(np.zeros((0, 3)), np.zeros(3), up) == math.inf
    # a height difference is not an approach: along the ground only (with up known)
    assert nearest_ground_distance_m(np.array([[3.0, 4.0, 10.0]]), np.zeros(3), up) == pytest.approx(5.0)
    assert nearest_ground_distance_m(np.array([[3.0, 4.0, 12.0]]), np.zeros(3), None) == pytest.approx(13.0)
    T = np.repeat(np.eye(4)[None], 4, axis=0)
    T[:, 0, 3] = [4.0, 2.0, 1.0, 3.0]  # the wearer walks along x at t = 0, 10, 20, 30 s
    track = EgoTrack(np.array([0.0, 10.0, 20.0, 30.0]), T)
    target = np.zeros(3)
    assert track.nearest_approach_m(target, 12.0, 30.0, up) == pytest.approx(1.0)  # from the pose at 10 s on
    assert track.nearest_approach_m(target, 25.0, 30.0, up) == pytest.approx(1.0)  # the pose held since 20 s counts
    assert track.nearest_approach_m(target, 0.0, 5.0, up) == pytest.approx(4.0)  # nothing after t1
    assert track.nearest_approach_m(target, 0.0, -1.0, up) == math.inf  # nothing before the first pose


def test_mask_pixels_are_numpys_nonzero():
    from directme.geometry import mask_pixels

    rng = np.random.default_rng(0)
    for shape, share in (((240, 320), 0.003), ((7, 5), 0.5), ((3, 4), 0.0), ((1, 9), 1.0)):
        m = rng.random(shape) < share
        rows, cols = mask_pixels(m)
        ref_rows, ref_cols = np.nonzero(m)
        assert np.array_equal(rows, ref_rows) and np.array_equal(cols, ref_cols)


def test_mask_box_is_the_exclusive_box_of_the_true_pixels():
    from directme.geometry import mask_box
    from directme.perception.tracks import mask_box as detector_box

    m = np.zeros((12, 20), bool)
    assert mask_box(m) is None and detector_box(m) is None
    m[3, 7] = m[8, 2] = m[5, 15] = True
    assert mask_box(m) == (2, 3, 16, 9)
    assert detector_box(m.astype(np.uint8)) == (2.0, 3.0, 16.0, 9.0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False), min_size=1,
                max_size=80), st.sampled_from([np.float64, np.float32]))
def test_median_is_numpys_median_exactly(values, dtype):
    x = np.asarray(values, dtype=dtype)
    from directme.geometry import median

    assert median(x) == float(np.median(x))


def test_median_of_nothing_is_nan_like_numpys():
    from directme.geometry import median

    assert math.isnan(median(np.zeros(0)))
