"""RGB-D odometry (open3d, no learned weights) on 7-Scenes redkitchen: ATE RMSE vs GT poses.

    python benchmarks/odometry_7scenes.py --frames 300

Prints name=value lines; the last one is ``ate_rmse_m=`` (after rigid alignment).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from directme.perception.alignment import ate_rmse
from directme.perception.rgbd_odometry import RGBDOdometry
from directme.readers.rgbd import SevenScenesReader

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "sevenscenes-redkitchen"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--method", default="hybrid", choices=["hybrid", "color", "depth"])
    args = ap.parse_args()
    if not args.data.exists():
        raise SystemExit(f"7-Scenes data not found at {args.data}; pass --data")
    odo = RGBDOdometry(method=args.method)
    est, gt = [], []
    t0 = time.perf_counter()
    for frame in SevenScenesReader(args.data, fps=None, max_frames=args.frames):
        for f, dp in odo.push(frame):
            est.append(dp.T_world_cam.matrix)
            gt.append(f.T_world_cam.matrix)
    dt = time.perf_counter() - t0
    est_p, gt_p = np.array(est)[:, :3, 3], np.array(gt)[:, :3, 3]
    path_m = float(np.sum(np.linalg.norm(np.diff(gt_p, axis=0), axis=1)))
    print(f"frames={len(est)}")
    print(f"gt_path_length_m={path_m:.3f}")
    print(f"odometry_failures={odo.failures}")
    print(f"seconds_per_frame={dt / max(len(est), 1):.4f}")
    print(f"ate_rmse_m={ate_rmse(est_p, gt_p):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
