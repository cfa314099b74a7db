"""`directme doctor`: one line per backend - package imports, architecture builds with random
weights and runs one tiny forward pass here, real weights found (and where) - then the verdict
(doctor_verdict.py): device, torch build, weight sets found and the folders searched, what runs now,
the command fetching each missing weight set.

Exit status 1 when an installed backend is broken (imports but fails to build or run);
a backend whose package is not installed is reported, not an error.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

import numpy as np


@dataclass(frozen=True)
class BackendCheck:
    name: str
    module: str  # the third-party package that must import
    run: Optional[Callable[[], str]]  # random-weight build + one tiny forward -> summary (None: no model)
    weights: Callable[[], str]  # where real weights are, or "not found (fetch: ...)"


def _tiny_rgb(h: int = 48, w: int = 64) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 255, (h, w, 3), dtype=np.uint8)


def _tiny_frames(n: int, rgb_only: bool = False) -> list:
    """Tiny RGB-D frames with pose and intrinsics, or RGB only (what a video gives)."""
    from ..geometry import Intrinsics, Pose
    from ..types import Frame

    if rgb_only:
        return [Frame(t_s=float(i), rgb=_tiny_rgb(), index=i) for i in range(n)]
    K = Intrinsics(50.0, 50.0, 31.5, 23.5, 64, 48)
    return [Frame(t_s=float(i), rgb=_tiny_rgb(), depth_m=np.full((48, 64), 2.0, np.float32),
                  T_world_cam=Pose.identity(), intrinsics=K, index=i) for i in range(n)]


def _run_depth_pose(cfg: dict, n: int = 2) -> str:
    from ..perception import build_perception

    p = build_perception({"depth_pose": cfg})
    out = [fp for f in _tiny_frames(n, rgb_only=cfg["name"] == "da3") for fp in p.process(f)] + p.flush()
    for fp in out:
        fp.validate()
    built = f"built {cfg['preset']}, " if "preset" in cfg else ""
    return f"{built}{len(out)} frames, depth {out[0].frame.depth_m.shape}"


def _da3_weights() -> str:
    """Weights of the da3 presets the pipeline uses by default (the check builds a small one), and which
    presets give metres."""
    from ..perception import weights as w
    from ..perception.da3 import PRESETS as DA3_REPOS
    from ..perception.da3 import metres_summary
    from ..perception.pipeline import PRESETS

    cfg = PRESETS["default"]["depth_pose"]
    preset, metric = cfg["preset"], cfg.get("metric_scale")
    found = f"{preset} (default preset): {w.describe(DA3_REPOS[preset])}"
    if metric:
        found += f"; {metric} (its metric scale): {w.describe(DA3_REPOS[metric])}"
    return f"{found} | metres: {metres_summary()}"


def _run_detector(cfg: dict) -> str:
    from ..perception import build_stage

    det = build_stage("detector", cfg)
    det.set_vocabulary(["cup", "chair"])
    return f"{len(det.detect(_tiny_rgb()))} boxes"


def _run_tracker() -> str:
    from ..perception.base import Detection
    from ..perception.sam2_tracker import Sam2StreamTracker

    tr = Sam2StreamTracker(weights="random", image_size=128)
    frames = _tiny_frames(2)
    tr.update(frames[0], [Detection((5.0, 5.0, 30.0, 30.0), "cup", 0.9)])
    tr.update(frames[1], None)
    return f"{tr.n_tracks} track(s), {tr.memory_frames()} memory entries"


def _run_clip() -> str:
    from ..perception.scene_tag import ClipSceneTagger

    return "tag %r" % (ClipSceneTagger(weights="random").tag(_tiny_rgb())[0],)


def _weights(key: str) -> Callable[[], str]:
    """Where weight set ``key`` (doctor_verdict.weight_sets) was found, or 'not found (fetch: COMMAND)'."""
    def find() -> str:
        from ..errors import MissingWeightsError
        from .doctor_verdict import weight_sets

        ws = next(w for w in weight_sets() if w.key == key)
        try:
            return str(ws.locate())
        except MissingWeightsError:
            return f"not found (fetch: {ws.fetch})"
    return find


def _gdino_ida_weights() -> str:
    from ..perception.grounding_dino_ida import describe_weights

    return describe_weights()


def _none() -> str:
    return "none needed"


CHECKS = [
    BackendCheck("depth_pose given", "numpy", lambda: _run_depth_pose({"name": "given"}), _none),
    BackendCheck("depth_pose rgbd_odometry", "open3d", lambda: _run_depth_pose({"name": "rgbd_odometry"}), _none),
    BackendCheck("depth_pose da3", "depth_anything_3",
                 lambda: _run_depth_pose({"name": "da3", "preset": "da3-small", "weights": "random",
                                          "chunk_size": 2, "overlap": 1, "process_res": 56}),
                 _da3_weights),
    BackendCheck("detector grounding_dino (tiny)", "transformers",
                 lambda: _run_detector({"name": "grounding_dino", "weights": "random", "image_size": 64}),
                 _weights("grounding_dino")),
    BackendCheck("detector grounding_dino_ida (tiny)", "groundingdino",
                 lambda: _run_detector({"name": "grounding_dino_ida", "weights": "random", "image_size": 64}),
                 _gdino_ida_weights),
    BackendCheck("detector yolo_world (yolov8s-worldv2)", "ultralytics",
                 lambda: _run_detector({"name": "yolo_world", "weights": "random", "imgsz": 64}),
                 _weights("yolo_world")),
    BackendCheck("detector yoloe (yoloe-11s)", "ultralytics",
                 lambda: _run_detector({"name": "yoloe", "weights": "random", "imgsz": 64}),
                 _weights("yoloe")),
    BackendCheck("tracker sam2 (tiny)", "sam2", _run_tracker, _weights("sam2")),
    BackendCheck("scene_tagger clip", "transformers", _run_clip, _weights("clip")),
    BackendCheck("reader video (PyAV)", "av", None, _none),
    BackendCheck("reader aria (projectaria-tools)", "projectaria_tools", None, _none),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", default=None, help="check only backends whose name contains this text")
    parser.add_argument("--imports-only", action="store_true", help="skip the random-weight build and forward")


def check_line(check: BackendCheck, imports_only: bool = False) -> tuple[str, bool]:
    """(one report line, broken?) for one backend."""
    if importlib.util.find_spec(check.module) is None:
        return f"{check.name:40s} not installed (pip install 'directme[perception]')", False
    t0 = time.perf_counter()
    try:
        from .._compat.torchvision_cpu import import_torch_stack

        with _quiet():
            import_torch_stack(check.module)
    except Exception as exc:  # noqa: BLE001 - report any import failure
        return f"{check.name:40s} BROKEN: import {check.module} failed: {exc}", True
    parts = [f"import ok {time.perf_counter() - t0:.1f}s"]
    broken = False
    if not imports_only and check.run is not None:
        t0 = time.perf_counter()
        try:
            with _quiet():
                summary = check.run()
            parts.append(f"random-weight build+forward ok {time.perf_counter() - t0:.1f}s ({summary})")
        except Exception as exc:  # noqa: BLE001
            parts.append(f"BROKEN: build/forward failed: {type(exc).__name__}: {exc}")
            broken = True
    parts.append(f"weights: {check.weights()}")
    return f"{check.name:40s} " + " | ".join(parts), broken


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Swallow what backends print while checked (DA3 logs [INFO]/[WARN] lines to stdout), so the
    report stays one line per backend; exceptions still surface."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def _extra_checks() -> list:
    try:
        mod = importlib.import_module("directme.commands.doctor_checks")
    except ModuleNotFoundError:
        return []
    return list(mod.checks())


def run(args: argparse.Namespace) -> int:
    from .doctor_verdict import format_verdict, gather

    only: Optional[str] = args.only
    broken = checked = 0
    for check in CHECKS:
        if only and only not in check.name:
            continue
        line, bad = check_line(check, args.imports_only)
        broken += bad
        checked += importlib.util.find_spec(check.module) is not None
        print(line, flush=True)
    if not args.imports_only:
        for name, fn in _extra_checks():
            if only and only not in name:
                continue
            try:
                with _quiet():  # the tiny random models' own warnings and progress bars
                    summary = fn()
                print(f"{name:40s} ok: {summary}", flush=True)
            except Exception as exc:  # noqa: BLE001
                print(f"{name:40s} BROKEN: {type(exc).__name__}: {exc}", flush=True)
                broken += 1
            checked += 1
    print(format_verdict(gather(), checked, broken, built=not args.imports_only))
    return 1 if broken else 0
