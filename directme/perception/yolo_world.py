"""Open-vocabulary detection with YOLO-World (v2) or YOLOE (ultralytics), fully offline.

ultralytics' `set_classes(names)` embeds the class names with a CLIP text encoder that it
tries to pip-install from a git URL at run time; here the embeddings are supplied instead:
from ``text_embeddings`` (an .npz with ``labels`` and ``embeddings`` (N, 512), made once on a
networked machine), else from a local CLIP ViT-B/32 (transformers, Hugging Face cache), else
MissingWeightsError. ``weights: "random"`` uses random embeddings and a random network.
The network is called directly (letterbox -> forward -> NMS), never through YOLO.predict.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .._compat.device import resolve_device
from .._compat.torchvision_cpu import import_torch_stack
from ..errors import InvalidInputError, MissingWeightsError
from .base import Detection
from .weights import RANDOM, WeightSpec, find_hf_model_dir, find_weights

EMBED_DIM = 512
CLIP_B32 = "openai/clip-vit-base-patch32"
# the GitHub release of ultralytics/assets hosting the YOLO-World / YOLOE checkpoints (ultralytics 8.4's default)
ASSETS_RELEASE_URL = "https://github.com/ultralytics/assets/releases/download/v8.4.0"


def checkpoint_spec(model: str) -> WeightSpec:
    """The checkpoint file of ``model`` (yolov8s-worldv2, yoloe-11s, ...) and where to download it."""
    filename = f"{model}-seg.pt" if model.startswith("yoloe") and not model.endswith("-seg") else f"{model}.pt"
    return WeightSpec(filename, url=f"{ASSETS_RELEASE_URL}/{filename}")


def _offline_env() -> None:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_AUTOINSTALL", "0")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(Path(tempfile.gettempdir()) / "directme-ultralytics"))


def clip_text_embeddings(labels: Sequence[str], clip_dir: Optional[str] = None, device: str = "cpu") -> np.ndarray:
    """L2-normalised CLIP ViT-B/32 text embeddings (N, 512) from a local model folder."""
    tf = import_torch_stack("transformers", "vlm")
    torch = import_torch_stack("torch", "perception")
    folder = find_hf_model_dir(CLIP_B32, clip_dir, "yolo_world text embeddings (CLIP ViT-B/32)")
    model = tf.CLIPModel.from_pretrained(folder).eval().to(device)
    tok = tf.AutoTokenizer.from_pretrained(folder)
    with torch.no_grad():
        enc = tok(list(labels), padding=True, return_tensors="pt").to(device)
        feats = model.get_text_features(**enc)
        feats = feats if hasattr(feats, "norm") else feats.pooler_output
    return torch.nn.functional.normalize(feats, dim=-1).cpu().numpy()


class YoloWorldDetector:
    """``model``: e.g. yolov8s-worldv2 (YOLO-World) or yoloe-11s (YOLOE); ``weights``: a .pt path,
    None (search the usual folders) or "random"; ``imgsz``: network input side (multiple of 32)."""

    def __init__(self, model: str = "yolov8s-worldv2", weights: Optional[str] = None, device: str = "auto",
                 text_embeddings: Optional[str] = None, clip_dir: Optional[str] = None, imgsz: int = 640,
                 conf: float = 0.25, iou: float = 0.5, max_detections: int = 50, name: str = "yolo_world"):
        _offline_env()
        device = resolve_device(device, f"detector '{name}' device")
        self.torch = import_torch_stack("torch", "perception")
        tasks = import_torch_stack("ultralytics.nn.tasks", "perception", "ultralytics")
        self.name, self.device, self.random = name, device, weights == RANDOM
        self.is_yoloe = model.startswith("yoloe")
        if imgsz % 32:
            raise InvalidInputError(f"{name}: imgsz must be a multiple of 32, got {imgsz}")
        if self.random:
            cls = tasks.YOLOEModel if self.is_yoloe else tasks.WorldModel
            self.net = cls(f"{model}.yaml", verbose=False)
        else:
            path = find_weights(checkpoint_spec(model), weights, f"detector '{name}'")
            self.net = tasks.load_checkpoint(str(path), device=device)[0]
        self.net = self.net.float().eval().to(device)
        self.text_embeddings, self.clip_dir = text_embeddings, clip_dir
        self.imgsz, self.conf, self.iou, self.max_det = imgsz, conf, iou, max_detections
        self.labels: list[str] = []

    def _embeddings(self, labels: list[str]) -> np.ndarray:
        if self.random:
            rng = np.random.default_rng(0)
            e = rng.normal(size=(len(labels), EMBED_DIM))
            return e / np.linalg.norm(e, axis=1, keepdims=True)
        if self.text_embeddings:
            data = np.load(self.text_embeddings, allow_pickle=False)
            table = dict(zip([str(x) for x in data["labels"]], data["embeddings"]))
            missing = [lab for lab in labels if lab not in table]
            if missing:
                raise InvalidInputError(f"{self.text_embeddings}: no embedding for {missing[:5]} "
                                        f"({len(missing)} labels); regenerate it for this vocabulary")
            return np.stack([table[lab] for lab in labels])
        try:
            return clip_text_embeddings(labels, self.clip_dir, self.device)
        except MissingWeightsError as exc:
            raise MissingWeightsError(f"{exc} Alternatively give 'text_embeddings': an .npz with 'labels' and "
                                      "'embeddings' (N, 512) from CLIP ViT-B/32.") from exc

    def set_vocabulary(self, labels: Sequence[str]) -> None:
        self.labels = [str(x) for x in labels]
        if not self.labels:
            raise InvalidInputError(f"{self.name}: empty vocabulary")
        pe = self.torch.as_tensor(self._embeddings(self.labels), dtype=self.torch.float32,
                                  device=self.device)[None]
        if self.is_yoloe:
            self.net.set_classes(self.labels, pe)
        else:
            self.net.txt_feats = pe
            self.net.model[-1].nc = len(self.labels)
            self.net.names = dict(enumerate(self.labels))

    def _letterbox(self, rgb: np.ndarray) -> tuple[Any, float, tuple[int, int]]:
        from PIL import Image

        h, w = rgb.shape[:2]
        r = self.imgsz / max(h, w)
        nh, nw = max(1, round(h * r)), max(1, round(w * r))
        canvas = np.full((self.imgsz, self.imgsz, 3), 114, np.uint8)
        top, left = (self.imgsz - nh) // 2, (self.imgsz - nw) // 2
        canvas[top:top + nh, left:left + nw] = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.BILINEAR))
        x = self.torch.from_numpy(canvas.transpose(2, 0, 1)[None].astype(np.float32) / 255.0).to(self.device)
        return x, r, (left, top)

    def detect(self, rgb: np.ndarray) -> list[Detection]:
        if not self.labels:
            raise InvalidInputError(f"{self.name}: call set_vocabulary(labels) before detect()")
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise InvalidInputError(f"{self.name}: image must be (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
        nms = import_torch_stack("ultralytics.utils.nms", "perception", "ultralytics")
        x, r, (left, top) = self._letterbox(rgb)
        with self.torch.no_grad():
            pred = self.net(x)
            pred = pred[0] if isinstance(pred, (list, tuple)) else pred
            det = nms.non_max_suppression(pred[:, : 4 + len(self.labels)], self.conf, self.iou,
                                          max_det=self.max_det)[0].cpu().numpy()
        h, w = rgb.shape[:2]
        out = []
        for x0, y0, x1, y1, score, cls in det[:, :6]:
            box = (float(np.clip((x0 - left) / r, 0, w)), float(np.clip((y0 - top) / r, 0, h)),
                   float(np.clip((x1 - left) / r, 0, w)), float(np.clip((y1 - top) / r, 0, h)))
            if box[2] > box[0] and box[3] > box[1]:
                out.append(Detection(box, self.labels[int(cls)], float(min(1.0, score))))
        return out


def build(cfg: Mapping[str, Any]) -> YoloWorldDetector:
    kw = dict(cfg)
    if kw.get("name") == "yoloe":
        kw.setdefault("model", "yoloe-11s")
    return YoloWorldDetector(**kw)
