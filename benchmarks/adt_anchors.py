"""Object anchors from real Aria Digital Twin frames vs ground-truth object positions.

For each RGB frame of ../shared/data/aria/adt: ground-truth depth and instance masks are
rectified (with the RGB image) to a pinhole camera, and every visible instance is lifted with
the GT device pose through the memory's own code: directme.memory.map.FrameLift (strided
back-projection, depth-inlier filter, hidden back side of face-on objects) with the default
MemoryConfig (pixel_stride, max_depth_m, min_points) and the memory's 'up' (config up_world,
else the first camera's -y). Its anchor is the centre of the [obs_trim, 1 - obs_trim] quantile
box (map.trimmed_box), as the memory computes for one observation, and is compared with the
object's GT centre (scene_objects.csv pose applied to the 3d_bounding_box.csv box centre).

    python benchmarks/adt_anchors.py

Prints name=value lines; the last one is ``median_error_m=``.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from directme.geometry import Pose, default_up_world
from directme.memory.config import MemoryConfig
from directme.memory.map import FrameLift, trimmed_box
from directme.readers.aria import AriaRectifier
from directme.readers.poses import quat_xyzw_to_R

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "aria" / "adt"


def gt_object_centres(folder: Path) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """uid -> world position of the object origin, and of its 3D bounding-box centre."""
    boxes = {}
    with open(folder / "3d_bounding_box.csv") as f:
        for r in csv.DictReader(f):
            lo = [float(r[f"p_local_obj_{a}min[m]"]) for a in "xyz"]
            hi = [float(r[f"p_local_obj_{a}max[m]"]) for a in "xyz"]
            boxes[int(r["object_uid"])] = (np.array(lo) + np.array(hi)) / 2
    origins, centres = {}, {}
    with open(folder / "scene_objects.csv") as f:
        for r in csv.DictReader(f):
            uid = int(r["object_uid"])
            R = quat_xyzw_to_R([float(r["q_wo_x"]), float(r["q_wo_y"]), float(r["q_wo_z"]), float(r["q_wo_w"])])
            t = np.array([float(r[f"t_wo_{a}[m]"]) for a in "xyz"])
            origins[uid] = t
            centres[uid] = t + R @ boxes.get(uid, np.zeros(3))
    return origins, centres


def ray_to_z(depth: np.ndarray, K) -> np.ndarray:
    v, u = np.mgrid[0:depth.shape[0], 0:depth.shape[1]]
    return depth / np.sqrt(1 + ((u - K.cx) / K.fx) ** 2 + ((v - K.cy) / K.fy) ** 2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--size", type=int, default=512, help="side of the rectified pinhole image (px)")
    ap.add_argument("--min-pixels", type=int, default=200, help="smallest instance mask that is lifted")
    ap.add_argument("--depth-is-ray", action="store_true", help="treat GT depth as distance along the ray")
    args = ap.parse_args()
    if not args.data.exists():
        raise SystemExit(f"ADT data not found at {args.data}; pass --data")
    from projectaria_tools.core.stream_id import StreamId
    from projectaria_tools.projects.adt import AriaDigitalTwinDataPathsProvider, AriaDigitalTwinDataProvider

    gt = AriaDigitalTwinDataProvider(AriaDigitalTwinDataPathsProvider(str(args.data)).get_datapaths())
    sid = StreamId("214-1")
    rect = AriaRectifier(_DeviceCalib(gt, sid), "camera-rgb", args.size)
    origins, centres = gt_object_centres(args.data)
    cfg = MemoryConfig()
    up = None if cfg.up_world is None else np.asarray(cfg.up_world, np.float64)
    err_centre, err_origin, frames = [], [], 0
    for t_ns in gt.get_aria_device_capture_timestamps_ns(sid):
        depth, seg, pose = (gt.get_depth_image_by_timestamp_ns(t_ns, sid),
                            gt.get_segmentation_image_by_timestamp_ns(t_ns, sid), gt.get_aria_3d_pose_by_timestamp_ns(t_ns))
        if not (depth.is_valid() and seg.is_valid() and pose.is_valid()) or abs(depth.dt_ns()) > 1_000_000:
            continue
        frames += 1
        T_world_cam = Pose(pose.data().transform_scene_device.to_matrix()) @ rect.T_device_cam
        depth_m = rect.depth(depth.data().to_numpy_array()).astype(np.float32) / 1000.0
        if args.depth_is_ray:
            depth_m = ray_to_z(depth_m, rect.intrinsics).astype(np.float32)
        labels = rect.labels(seg.data().to_numpy_array())
        up = default_up_world(T_world_cam) if up is None else up
        lift = FrameLift.compute(depth_m, rect.intrinsics, T_world_cam, cfg.map)
        ids, counts = np.unique(labels[depth_m > 0], return_counts=True)
        for uid, n in zip(ids.tolist(), counts.tolist()):
            if uid not in centres or n < args.min_pixels:
                continue
            pts = lift.instance_points(labels == uid, up)
            if len(pts) < cfg.map.min_points:
                continue
            anchor = trimmed_box(pts, cfg.map.obs_trim)[0]
            err_centre.append(np.linalg.norm(anchor - centres[uid]))
            err_origin.append(np.linalg.norm(anchor - origins[uid]))
    if not err_centre:
        raise SystemExit("no visible instance found")
    print(f"frames={frames}")
    print(f"instances_lifted={len(err_centre)}")
    print(f"depth_convention={'ray' if args.depth_is_ray else 'z'}")
    print(f"anchor=memory FrameLift.instance_points + trimmed_box(obs_trim={cfg.map.obs_trim}), "
          f"pixel_stride={cfg.map.pixel_stride}")
    print(f"median_error_vs_object_origin_m={np.median(err_origin):.4f}")
    print(f"p90_error_m={np.percentile(err_centre, 90):.4f}")
    print(f"median_error_m={np.median(err_centre):.4f}")
    return 0


class _DeviceCalib:
    """Adapter: AriaRectifier wants get_camera_calib(label); ADT gives the RGB calibration by stream."""

    def __init__(self, gt, sid) -> None:
        self._calib = gt.get_aria_camera_calibration(sid)

    def get_camera_calib(self, label: str):
        return self._calib


if __name__ == "__main__":
    raise SystemExit(main())
