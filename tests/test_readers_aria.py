"""Aria recording folders: which files are found (ADT ground truth, MPS / ADT trajectories), gravity from
trajectory CSVs, and real ADT frames with ground-truth depth and instances."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.readers.aria_folder import PoseSourceKind, find_aria_recording, is_aria_folder
from directme.readers.poses import read_aria_mps_trajectory

ADT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "aria" / "adt"
HEADER = ("graph_uid,tracking_timestamp_us,utc_timestamp_ns,tx_world_device,ty_world_device,tz_world_device,"
          "qx_world_device,qy_world_device,qz_world_device,qw_world_device,gravity_x_world,gravity_y_world,"
          "gravity_z_world\n")


def _touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"")


def test_adt_folder_uses_its_ground_truth_and_trajectory(tmp_path: Path) -> None:
    _touch(tmp_path, "video.vrs", "aria_trajectory.csv", "depth_images.vrs", "segmentations.vrs", "instances.json",
           "mps/slam/closed_loop_trajectory.csv")
    rec = find_aria_recording(tmp_path)
    assert is_aria_folder(tmp_path) and rec.vrs.name == "video.vrs"
    assert rec.trajectory_kind == PoseSourceKind.ADT and rec.trajectory.name == "aria_trajectory.csv"
    assert rec.gt_depth.name == "depth_images.vrs" and rec.gt_segmentation.name == "segmentations.vrs"
    assert "ADT ground truth" in rec.describe() and "instances" in rec.describe()


def test_mps_folder_gives_poses_only(tmp_path: Path) -> None:
    _touch(tmp_path, "recording.vrs", "mps/slam/closed_loop_trajectory.csv", "mps/slam/open_loop_trajectory.csv")
    rec = find_aria_recording(tmp_path)
    assert rec.vrs.name == "recording.vrs" and rec.trajectory_kind == PoseSourceKind.MPS
    assert rec.trajectory == tmp_path / "mps/slam/closed_loop_trajectory.csv"
    assert rec.gt_depth is None and "depth: none" in rec.describe()


def test_ground_truth_is_dropped_with_another_trajectory(tmp_path: Path) -> None:
    """ADT depth and masks are in the ADT trajectory's world: with an MPS trajectory they would not line up."""
    _touch(tmp_path, "video.vrs", "depth_images.vrs", "segmentations.vrs", "instances.json", "mine.csv")
    rec = find_aria_recording(tmp_path, trajectory=tmp_path / "mine.csv")
    assert rec.trajectory_kind == PoseSourceKind.FILE and rec.gt_depth is None and rec.gt_segmentation is None
    assert find_aria_recording(tmp_path).trajectory_kind == PoseSourceKind.NONE


def test_one_recording_per_folder(tmp_path: Path) -> None:
    _touch(tmp_path, "a.vrs", "b.vrs")
    with pytest.raises(InvalidInputError, match="expected one Aria recording"):
        find_aria_recording(tmp_path)
    (tmp_path / "b.vrs").unlink()
    assert find_aria_recording(tmp_path).vrs.name == "a.vrs" and not is_aria_folder(tmp_path)


def test_up_from_the_trajectory_gravity(tmp_path: Path) -> None:
    f = tmp_path / "closed_loop_trajectory.csv"
    f.write_text(HEADER + "g,1000000,-1,0,0,0,0,0,0,1,0,0,-9.81\ng,2000000,-1,1,0,0,0,0,0,1,0,0,-9.80\n")
    traj = read_aria_mps_trajectory(f)
    assert traj.up_world == (0.0, 0.0, 1.0) and np.allclose(traj.t_s, [1.0, 2.0])
    f.write_text("tracking_timestamp_us,tx_world_device,ty_world_device,tz_world_device,qx_world_device,"
                 "qy_world_device,qz_world_device,qw_world_device\n1,0,0,0,0,0,0,1\n")
    assert read_aria_mps_trajectory(f).up_world is None


def test_real_adt_frames_carry_ground_truth() -> None:
    if not (ADT / "depth_images.vrs").exists():
        pytest.skip(f"ADT test sequence not found at {ADT}")
    pytest.importorskip("projectaria_tools")
    from directme.readers import open_reader

    reader = open_reader(ADT, fps=None, out_size=128)
    frames = list(reader)
    assert reader.estimated_frames() == len(frames) == 2  # the third RGB frame has no GT depth
    assert reader.up_world == (0.0, 1.0, 0.0)  # ADT: gravity along -y
    f = frames[0]
    assert f.depth_m.shape == (128, 128) and f.depth_m.dtype == np.float32
    valid = f.depth_m[f.depth_m > 0]
    assert valid.size > 0.9 * f.depth_m.size and 0.3 < np.median(valid) < 4.0
    labels = {i.label for i in f.meta["instances"]}
    assert {"refrigerator", "cooktop"} <= labels and "person" not in labels
    assert all(i.mask.shape == (128, 128) and i.mask.any() for i in f.meta["instances"])
