"""Pose-file parsers and rate resampling."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.geometry import rotation_about_axis
from directme.readers.poses import (quat_xyzw_to_R, read_aria_mps_trajectory, read_matrix_pose,
                                    read_trajectory, read_tum_trajectory)
from directme.readers.resample import RateSampler, resample


def test_quaternion_matches_axis_angle() -> None:
    R = rotation_about_axis(np.array([0.0, 0.0, 1.0]), np.pi / 2)
    q = (0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4))
    assert np.allclose(quat_xyzw_to_R(q), R)
    with pytest.raises(InvalidInputError):
        quat_xyzw_to_R((0, 0, 0, 0))


def test_tum_trajectory(tmp_path: Path) -> None:
    f = tmp_path / "gt.txt"
    f.write_text("# timestamp tx ty tz qx qy qz qw\n1.0 1 2 3 0 0 0 1\n1.5 4 5 6 0 0 0.7071068 0.7071068\n")
    traj = read_tum_trajectory(f)
    assert len(traj) == 2 and np.allclose(traj.t_s, [1.0, 1.5])
    assert np.allclose(traj.nearest(1.49).t, [4, 5, 6])
    assert np.allclose(traj.nearest(1.49).R @ [1, 0, 0], [0, 1, 0], atol=1e-6)
    with pytest.raises(InvalidInputError, match="no pose within"):
        traj.nearest(3.0)
    f.write_text("1.0 1 2 3 0 0 1\n")
    with pytest.raises(InvalidInputError, match="gt.txt:1"):
        read_tum_trajectory(f)


def test_matrix_pose_and_errors(tmp_path: Path) -> None:
    f = tmp_path / "frame-000000.pose.txt"
    m = np.eye(4)
    m[:3, 3] = [0.1, 0.2, 0.3]
    np.savetxt(f, m)
    assert np.allclose(read_matrix_pose(f).matrix, m)
    m[0, 0] = -np.inf
    np.savetxt(f, m)
    with pytest.raises(InvalidInputError, match="non-finite"):
        read_matrix_pose(f)
    with pytest.raises(InvalidInputError, match="does not exist|cannot read"):
        read_matrix_pose(tmp_path / "missing.txt")


def test_aria_mps_csv(tmp_path: Path) -> None:
    f = tmp_path / "closed_loop_trajectory.csv"
    cols = "graph_uid,tracking_timestamp_us,tx_world_device,ty_world_device,tz_world_device," \
           "qx_world_device,qy_world_device,qz_world_device,qw_world_device"
    f.write_text(cols + "\ng,2000000,1,0,0,0,0,0,1\ng,1000000,0,0,0,0,0,0,1\n")
    traj = read_trajectory(f)
    assert np.allclose(traj.t_s, [1.0, 2.0]) and np.allclose(traj.positions()[1], [1, 0, 0])
    f.write_text("a,b\n1,2\n")
    with pytest.raises(InvalidInputError, match="missing columns"):
        read_aria_mps_trajectory(f)


def test_rate_sampler_keeps_exact_timestamps() -> None:
    t = np.arange(0, 5, 1 / 30.0) + 0.004
    kept = [ts for ts, _ in resample(((float(x), None) for x in t), 1.0)]
    assert len(kept) == 5
    assert all(any(abs(k - x) < 1e-12 for x in t) for k in kept)
    assert np.allclose(np.diff(kept), 1.0, atol=1 / 30.0)
    assert len(list(resample(((float(x), None) for x in t), None))) == len(t)
    s = RateSampler(2.0)
    assert s.keep(0.0)
    with pytest.raises(InvalidInputError, match="increasing"):
        s.keep(0.0)


def test_real_aria_trajectory() -> None:
    f = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "aria" / "adt" / "aria_trajectory.csv"
    if not f.exists():
        pytest.skip(f"shared data not available at {f}")
    traj = read_trajectory(f)
    assert len(traj) > 2 and np.all(np.diff(traj.t_s) > 0)
