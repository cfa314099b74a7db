"""The verdict that ends `directme doctor`: the device and torch build, the weight sets found (N of M)
and the folders searched, what can run now on which inputs, and the command fetching each missing set.

``gather()`` looks at this machine (imports torch, never downloads); ``format_verdict()`` is pure, so the
text documented in docs/getting-started.md is what a machine without weights prints."""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ..errors import MissingWeightsError


@dataclass(frozen=True)
class WeightSet:
    """One set of model weights: what uses it, how it is found here, and the command that fetches it."""

    key: str  # short name (the doctor's backend lines refer to it)
    used_by: str  # the backend and model using it
    locate: Callable[[], Path]  # the local file or folder, or MissingWeightsError
    fetch: str  # the command fetching it on a machine with network, into a folder searched here


def _hf_dir(repo: str) -> Callable[[], Path]:
    def locate() -> Path:
        from ..perception.weights import find_hf_model_dir

        return find_hf_model_dir(repo)
    return locate


def _file(spec_of: Callable[[], object]) -> Callable[[], Path]:
    def locate() -> Path:
        from ..perception.weights import find_weights

        return find_weights(spec_of())  # type: ignore[arg-type]
    return locate


def _bert() -> Path:
    from ..perception.grounding_dino_ida import find_bert_dir

    return find_bert_dir(None, "bert-base-uncased")


MLLM_REPO = "Qwen/Qwen3-VL-8B-Instruct"  # the MLLM of examples/configs/*qwen3vl.yaml and docs/mllm.md


def weight_sets() -> list[WeightSet]:
    """Every weight set a shipped backend or example config uses, in pipeline order."""
    from ..perception import grounding_dino_ida as ida
    from ..perception import yolo_world
    from ..perception.da3 import PRESETS as DA3
    from ..perception.grounding_dino import MODELS as GDINO
    from ..perception.pipeline import PRESETS
    from ..perception.sam2_tracker import MODELS as SAM2
    from ..perception.scene_tag import CLIP_REPO
    from ..perception.weights import WeightSpec, hf_download

    da3, da3_metric = PRESETS["default"]["depth_pose"]["preset"], PRESETS["default"]["depth_pose"]["metric_scale"]
    _, sam2_repo, sam2_file = SAM2["tiny"]
    sam2 = WeightSpec(sam2_file, sam2_repo)
    return [
        WeightSet("da3", f"depth_pose da3 ({da3}, default preset)", _hf_dir(DA3[da3]), hf_download(DA3[da3])),
        WeightSet("da3_metric", f"depth_pose da3 metres ({da3_metric})", _hf_dir(DA3[da3_metric]),
                  hf_download(DA3[da3_metric])),
        WeightSet("grounding_dino", "detector grounding_dino (tiny)", _hf_dir(GDINO["tiny"]),
                  hf_download(GDINO["tiny"])),
        WeightSet("grounding_dino_ida", "detector grounding_dino_ida (tiny checkpoint)",
                  _file(lambda: ida.checkpoint_spec("tiny")), ida.checkpoint_spec("tiny").fetch_hint()),
        WeightSet("bert", "detector grounding_dino_ida (bert-base-uncased tokenizer)", _bert,
                  hf_download(ida.BERT_REPOS[0], ida.BERT_FILES)),
        WeightSet("yolo_world", "detector yolo_world (yolov8s-worldv2)",
                  _file(lambda: yolo_world.checkpoint_spec("yolov8s-worldv2")),
                  yolo_world.checkpoint_spec("yolov8s-worldv2").fetch_hint()),
        WeightSet("yoloe", "detector yoloe (yoloe-11s)", _file(lambda: yolo_world.checkpoint_spec("yoloe-11s")),
                  yolo_world.checkpoint_spec("yoloe-11s").fetch_hint()),
        WeightSet("sam2", "tracker sam2 (tiny)", _file(lambda: sam2), sam2.fetch_hint()),
        WeightSet("clip", "scene_tagger clip; yolo_world/yoloe text embeddings", _hf_dir(CLIP_REPO),
                  hf_download(CLIP_REPO)),
        WeightSet("mllm", "answerer transformers (Qwen3-VL-8B)", _hf_dir(MLLM_REPO), hf_download(MLLM_REPO)),
    ]


@dataclass(frozen=True)
class Machine:
    """What the verdict is about: the device and torch build, the weights found, the packages installed."""

    device: str  # "CUDA: NVIDIA H100 80GB HBM3" or "CPU (no CUDA GPU visible)"
    torch: str  # "torch 2.13.0+cpu, CPU-only build" or "torch not installed"
    searched: tuple[str, ...]  # the folders the weights are looked for in, in order
    found: tuple[tuple[str, str], ...]  # (key, where) of each weight set found
    missing: tuple[WeightSet, ...]
    installed: frozenset  # importable third-party modules among those the inputs need
    n_sets: int


def _home(p: Path) -> str:
    home = str(Path.home())
    s = str(p)
    return "~" + s[len(home):] if home not in ("", "/") and s.startswith(home) else s


def _device() -> tuple[str, str]:
    if importlib.util.find_spec("torch") is None:
        return "CPU (torch not installed)", "torch not installed (pip install 'directme[perception]')"
    import torch

    build = f"CUDA {torch.version.cuda} build" if torch.version.cuda else "CPU-only build"
    if torch.cuda.is_available():
        return f"CUDA: {torch.cuda.get_device_name(0)} (device: auto uses it)", f"torch {torch.__version__}, {build}"
    return "CPU (no CUDA GPU visible; device: auto uses the CPU)", f"torch {torch.__version__}, {build}"


def _searched() -> tuple[str, ...]:
    env = os.environ.get("DIRECTME_WEIGHTS_DIR")
    try:
        from huggingface_hub import constants

        hf = f"the Hugging Face cache ({_home(Path(constants.HF_HUB_CACHE))})"
    except ImportError:
        hf = "the Hugging Face cache (huggingface_hub not installed)"
    return (f"$DIRECTME_WEIGHTS_DIR ({_home(Path(env)) if env else 'not set'})",
            _home(Path("~/.cache/directme").expanduser()), hf)


INPUT_MODULES = ("open3d", "av", "projectaria_tools", "transformers", "depth_anything_3", "sam2", "ultralytics",
                 "groundingdino")


def gather(sets: Optional[list[WeightSet]] = None) -> Machine:
    """Look at this machine: device, torch build, weights (offline lookups only), installed packages."""
    sets = weight_sets() if sets is None else sets
    found, missing = [], []
    for ws in sets:
        try:
            found.append((ws.key, _home(ws.locate())))
        except MissingWeightsError:
            missing.append(ws)
    device, torch = _device()
    installed = frozenset(m for m in INPUT_MODULES if importlib.util.find_spec(m) is not None)
    return Machine(device, torch, _searched(), tuple(found), tuple(missing), installed, len(sets))


def _runs_now(m: Machine) -> list[str]:
    have = {k for k, _ in m.found}
    detector = next((name for name, ok in (
        ("grounding_dino", "grounding_dino" in have and "transformers" in m.installed),
        ("grounding_dino_ida", {"grounding_dino_ida", "bert"} <= have and "groundingdino" in m.installed),
        ("yolo_world", {"yolo_world", "clip"} <= have and "ultralytics" in m.installed)) if ok), None)
    rooms = "clip" in have and "transformers" in m.installed
    extra = []
    extra.append(f"object questions (detector {detector})" if detector else
                 "no object questions (no detector weights)")
    extra.append("place questions with room names (CLIP)" if rooms else "place questions without room names (no CLIP)")
    sensors = "path questions; " + "; ".join(extra)
    lines = ["simulator episodes (directme demo | sim | run EPISODE): every question kind, with the simulator's "
             "ground truth as perception (oracle)",
             f"RGB-D folders (7-Scenes, TUM): {sensors}"]
    if "projectaria_tools" in m.installed:
        lines.append("Aria recordings: path questions from an MPS / ADT trajectory; with ADT ground truth also place "
                     "and object questions (perception aria_gt, no weights)")
    else:
        lines.append("Aria recordings: not readable (pip install 'directme[perception]' for projectaria-tools)")
    if "da3" in have and "depth_anything_3" in m.installed and "av" in m.installed:
        scale = "in metres" if "da3_metric" in have else \
            "up to an unknown scale (answers flagged; the metric model gives metres)"
        lines.append(f"videos and image folders: depth and pose from DA3 {scale}; {sensors}")
    else:
        lines.append("videos and image folders: nothing (depth and camera pose need the DA3 weights)")
    lines.append("questions the geometric answerer does not understand: " +
                 ("the MLLM answerer (Qwen3-VL)" if "mllm" in have else "abstain (no MLLM weights)"))
    return lines


def format_verdict(m: Machine, n_backends: int, n_broken: int, built: bool) -> str:
    """The verdict block; its last line starts with "doctor:"."""
    key_width = max([len(ws.used_by) for ws in m.missing] + [0])
    lines = ["", "verdict",
             f"  device:   {m.device}",
             f"  torch:    {m.torch}",
             f"  backends: {n_backends - n_broken} of {n_backends} installed backends "
             + ("build and run with random weights" if built else "import (not built: --imports-only)"),
             f"  weights:  {len(m.found)} of {m.n_sets} weight sets found; searched " + ", ".join(m.searched)]
    lines += [f"            found {key}: {where}" for key, where in m.found]
    lines.append("  runs now:")
    lines += [f"    - {line}" for line in _runs_now(m)]
    if m.missing:
        lines.append("  fetch the missing weights (on a machine with network, then run `directme doctor` again):")
        lines += [f"    {ws.used_by:{key_width}s}  {ws.fetch}" for ws in m.missing]
    if n_broken:
        summary = f"{n_broken} broken backend(s) (see BROKEN above)"
    elif not m.found:
        summary = ("backends work, but no weight set is present: only the simulator and inputs with depth and "
                   "poses run for real (random weights give meaningless answers)")
    elif m.missing:
        summary = f"backends work; {len(m.found)} of {m.n_sets} weight sets present (see runs now)"
    else:
        summary = "all installed backends work and every weight set is present"
    lines.append(f"doctor: {summary}")
    return "\n".join(lines)
