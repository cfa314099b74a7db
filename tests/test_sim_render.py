"""Renderer correctness on hand-made scenes: depth of known faces, instance ids, floor, walls."""
from __future__ import annotations

import numpy as np
import pytest

from directme.geometry import Intrinsics, backproject
from directme.sim.episode import Layout, Room
from directme.sim.generate import camera_pose
from directme.sim.layout import _wall_boxes
from directme.sim.render import BoxRenderer


@pytest.fixture()
def room():
    walls = (_wall_boxes("x", 0.0, 0.0, 6.0, []) + _wall_boxes("x", 4.0, 0.0, 6.0, [])
             + _wall_boxes("y", 0.0, 0.0, 4.0, []) + _wall_boxes("y", 6.0, 0.0, 4.0, []))
    return Layout((Room(0, "kitchen", 0.05, 0.05, 5.95, 3.95),), (), np.stack(walls), 2.6)


def test_depth_and_id_of_a_box_straight_ahead(room):
    K = Intrinsics.from_fov(64, 48, 70.0)
    r = BoxRenderer(room, K)
    pose = camera_pose(1.0, 2.0, 1.0, 0.0, 0.0)  # looking along +x, level, eye at 1 m
    lo, hi = np.array([[3.0, 1.7, 0.7]]), np.array([[3.6, 2.3, 1.3]])
    img = r.render(pose, lo, hi, np.array([7]), np.array([[200, 30, 30]]))
    v, u = int(round(K.cy)), int(round(K.cx))
    assert img.depth_m[v, u] == pytest.approx(2.0, abs=1e-4)  # near face at x = 3
    assert img.instance_ids[v, u] == 7 and img.rgb.shape == (48, 64, 3)
    # the box's projection is where the renderer put its id
    uv, _ = K.project(pose.inverse().apply(np.array([[3.0, 2.25, 1.25], [3.0, 1.75, 0.75]])))
    (u0, v0), (u1, v1) = uv.min(0), uv.max(0)
    ids = img.instance_ids
    assert np.all(ids[int(v0) + 1:int(v1), int(u0) + 1:int(u1)] == 7)
    assert ids[0, 0] == 0 and ids[-1, -1] == 0
    # back-projected box pixels lie on the box's near face
    pts = pose.apply(backproject(img.depth_m, K, ids == 7))
    assert np.allclose(pts[:, 0], 3.0, atol=1e-3)


def test_walls_floor_and_far_wall_depth(room):
    K = Intrinsics.from_fov(64, 48, 70.0)
    r = BoxRenderer(room, K)
    pose = camera_pose(1.0, 2.0, 1.0, 0.0, 0.0)
    img = r.render(pose, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, int), np.zeros((0, 3)))
    v, u = int(round(K.cy)), int(round(K.cx))
    assert img.depth_m[v, u] == pytest.approx(6.0 - 0.05 - 1.0, abs=1e-4)  # inner face of the far wall
    vb = K.height - 1  # bottom row hits the floor: z-depth = eye height * fy / (v - cy)
    assert img.depth_m[vb, u] == pytest.approx(1.0 * K.fy / (vb - K.cy), rel=1e-4)
    assert np.all(img.instance_ids == 0) and np.all(img.depth_m > 0)
    ids_only = r.render(pose, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, int), np.zeros((0, 3)), with_rgb=False)
    assert np.array_equal(ids_only.depth_m, img.depth_m)


def test_nearer_box_occludes(room):
    K = Intrinsics.from_fov(64, 48, 70.0)
    r = BoxRenderer(room, K)
    pose = camera_pose(1.0, 2.0, 1.0, 0.0, -10.0)
    lo = np.array([[4.0, 1.5, 0.5], [2.5, 1.9, 0.8]])
    hi = np.array([[4.5, 2.5, 1.5], [2.7, 2.1, 1.0]])
    img = r.render(pose, lo, hi, np.array([1, 2]), np.full((2, 3), 100.0))
    assert {1, 2} <= set(np.unique(img.instance_ids))
    c = pose.inverse().apply(np.array([[2.5, 2.0, 0.9]]))
    (u, v), = K.project(c)[0]
    assert img.instance_ids[int(round(v)), int(round(u))] == 2
