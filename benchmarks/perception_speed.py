"""Per-frame time of each perception backend, built with RANDOM weights in the real architecture
(compute does not depend on weight values; no downloads). CPU unless --device cuda.

    python benchmarks/perception_speed.py --frames 4 --size 480
    python benchmarks/perception_speed.py --only da3 --da3-preset da3-large --device cuda

Prints ``<backend>_s_per_frame=`` lines (median over frames after one warm-up frame) and,
when all three are timed, ``default_pipeline_fps=`` (DA3 + Grounding DINO tiny + SAM2 tiny,
detection every ``--redetect-every`` frames).
"""
from __future__ import annotations

import argparse
import platform
import time
from typing import Any, Callable

import numpy as np

from directme.geometry import Intrinsics, Pose
from directme.perception.base import Detection
from directme.types import Frame


def _frames(n: int, side: int) -> list[Frame]:
    h, w = side, side * 4 // 3
    rng = np.random.default_rng(0)
    K = Intrinsics(w * 0.8, w * 0.8, w / 2, h / 2, w, h)
    return [Frame(t_s=float(i), rgb=rng.integers(0, 255, (h, w, 3), dtype=np.uint8),
                  depth_m=np.full((h, w), 2.0, np.float32), T_world_cam=Pose.identity(), intrinsics=K, index=i)
            for i in range(n)]


def _time(fn: Callable[[Frame], Any], frames: list[Frame], sync: Callable[[], None]) -> float:
    fn(frames[0])  # warm-up
    sync()
    times = []
    for f in frames[1:]:
        t0 = time.perf_counter()
        fn(f)
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=4)
    ap.add_argument("--size", type=int, default=480, help="input frame height (width = 4/3 height)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--only", default=None, help="comma list of: da3,grounding_dino,grounding_dino_ida,yolo_world,sam2,clip,odometry")
    ap.add_argument("--da3-preset", default="da3-small")
    ap.add_argument("--da3-chunk", type=int, default=8)
    ap.add_argument("--sam2-size", type=int, default=1024)
    ap.add_argument("--gdino-size", type=int, default=800, help="Grounding DINO shortest side (800 = its default)")
    ap.add_argument("--redetect-every", type=int, default=5)
    args = ap.parse_args()
    import torch

    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    frames = _frames(args.frames + 1, args.size)
    only = set(args.only.split(",")) if args.only else None
    print("weights=random (real architectures; timings do not depend on weight values)")
    print(f"machine={platform.processor() or platform.machine()} torch_threads={torch.get_num_threads()} "
          f"device={torch.cuda.get_device_name() if args.device.startswith('cuda') else 'cpu'}")
    print(f"frame_size={frames[0].shape_hw[1]}x{frames[0].shape_hw[0]}")
    got: dict[str, float] = {}

    def want(name: str) -> bool:
        return only is None or name in only

    if want("da3"):
        from directme.perception.da3 import DEPTH_ONLY, DepthAnything3Backend

        # DA3's own poses, as on a plain video; depth-only presets (mono, metric) take the frames' poses
        da3 = DepthAnything3Backend(args.da3_preset, weights="random", device=args.device,
                                    chunk_size=args.da3_chunk, overlap=2,
                                    pose_source="given" if args.da3_preset in DEPTH_ONLY else "model")
        chunk = _frames(args.da3_chunk, args.size)
        for f in chunk:  # warm-up chunk
            da3.push(f)
        t0 = time.perf_counter()
        for f in _frames(args.da3_chunk - 2, args.size):
            da3.push(f)
        sync()
        got["da3"] = (time.perf_counter() - t0) / (args.da3_chunk - 2)
        print(f"da3_{args.da3_preset}_s_per_frame={got['da3']:.4f}")
    for name, module, cls in (("grounding_dino", "grounding_dino", "GroundingDinoDetector"),
                              ("grounding_dino_ida", "grounding_dino_ida", "GroundingDinoIdaDetector")):
        if not want(name):
            continue
        import importlib

        from directme.query.vocab import objects365_labels

        det = getattr(importlib.import_module(f"directme.perception.{module}"), cls)(
            weights="random", random_arch="full", device=args.device, image_size=args.gdino_size)
        det.set_vocabulary(list(objects365_labels()))
        got[name] = _time(lambda f: det.detect(f.rgb), frames, sync)
        print(f"{name}_tiny_{args.gdino_size}px_objects365_s_per_detection={got[name]:.4f} "
              f"({len(det.prompts)} prompts)")
    if want("yolo_world"):
        from directme.perception.yolo_world import YoloWorldDetector
        from directme.query.vocab import objects365_labels

        yw = YoloWorldDetector(weights="random", device=args.device)
        yw.set_vocabulary(list(objects365_labels()))
        print(f"yolo_world_v8s_s_per_detection={_time(lambda f: yw.detect(f.rgb), frames, sync):.4f}")
    if want("sam2"):
        from directme.perception.sam2_tracker import Sam2StreamTracker

        tr = Sam2StreamTracker(weights="random", device=args.device, image_size=args.sam2_size)
        dets = [Detection((10.0 * k, 10.0, 10.0 * k + 60, 90.0), "cup", 0.9) for k in range(5)]
        tr.update(frames[0], dets)
        got["sam2"] = _time(lambda f: tr.update(f, None), frames, sync)
        print(f"sam2_tiny_{args.sam2_size}px_5_tracks_s_per_frame={got['sam2']:.4f}")
    if want("clip"):
        from directme.perception.scene_tag import ClipSceneTagger

        ct = ClipSceneTagger(weights="random", random_arch="full", device=args.device)
        print(f"clip_b32_scene_tag_s_per_frame={_time(lambda f: ct.tag(f.rgb), frames, sync):.4f}")
    if want("odometry"):
        from directme.perception.rgbd_odometry import RGBDOdometry

        odo = RGBDOdometry()
        print(f"rgbd_odometry_s_per_frame={_time(odo.push, frames, sync):.4f}")
    if {"da3", "grounding_dino", "sam2"} <= set(got):
        per_frame = got["da3"] + got["sam2"] + got["grounding_dino"] / args.redetect_every
        print(f"default_pipeline_fps={1.0 / per_frame:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
