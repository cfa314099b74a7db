"""Open-vocabulary detection with YOLO-World (v2) or YOLOE (ultralytics), fully offline.

ultralytics' `set_classes(names)` embeds the class names with a text encoder that it tries to
download (and whose tokenizer package it pip-installs) at run time; here the same text path runs
on local files. YOLO-World: L2-normalised CLIP ViT-B/32 text features (``WorldModel.get_text_pe``).
YOLOE: MobileCLIP text features (``mobileclip_blt.ts``, ultralytics' TorchScript text encoder, or
``mobileclip2_b.ts`` for YOLOE-26) passed through the head's RepRTA (``YOLOEDetect.get_tpe``), as
``YOLOEModel.get_text_pe`` does. ``text_embeddings``: an .npz with ``labels`` and the RAW text-model
``embeddings`` (N, 512), made once on a networked machine. ``weights: "random"`` uses random text
vectors (through RepRTA for YOLOE) and a random network.
The network is called directly with ultralytics' own predict conventions (rectangular letterbox,
cv2 bilinear resize, class-aware NMS, box rescaling as ``ops.scale_boxes``).
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
# YOLOE's text model (the yaml's ``text_model``) -> ultralytics' TorchScript text encoder file
YOLOE_TEXT_MODELS = {"mobileclip:blt": "mobileclip_blt.ts", "mobileclip2:b": "mobileclip2_b.ts"}
CLIP_CONTEXT_LENGTH = 77


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


def clip_tokens(labels: Sequence[str], clip_dir: Optional[str] = None) -> Any:
    """CLIP BPE token ids (N, 77), zero padded, as ``clip.tokenize`` (the tokenizer of ultralytics' text
    encoders): from the ``clip`` package when installed, else from a local CLIP ViT-B/32 tokenizer."""
    torch = import_torch_stack("torch", "perception")
    try:
        import clip  # ultralytics' own tokenizer (github.com/ultralytics/CLIP)
    except ImportError:
        clip = None
    if clip is not None:
        return clip.tokenize(list(labels), truncate=True)
    tf = import_torch_stack("transformers", "vlm")
    folder = find_hf_model_dir(CLIP_B32, clip_dir, "YOLOE text tokenizer (CLIP ViT-B/32)", "tokenizer_config.json")
    ids = tf.AutoTokenizer.from_pretrained(folder)(list(labels), truncation=True,
                                                   max_length=CLIP_CONTEXT_LENGTH)["input_ids"]
    out = torch.zeros(len(ids), CLIP_CONTEXT_LENGTH, dtype=torch.long)
    for i, row in enumerate(ids):
        out[i, :len(row)] = torch.as_tensor(row)
    return out


def mobileclip_text_features(labels: Sequence[str], encoder_path: Path, clip_dir: Optional[str] = None,
                             device: str = "cpu") -> np.ndarray:
    """Raw YOLOE text-model vectors (N, 512) from ultralytics' TorchScript MobileCLIP text encoder
    (it normalises inside, as ``MobileCLIPTS.encode_text``)."""
    torch = import_torch_stack("torch", "perception")
    encoder = torch.jit.load(str(encoder_path), map_location=device)
    with torch.no_grad():
        return encoder(clip_tokens(labels, clip_dir).to(device)).float().cpu().numpy()


class YoloWorldDetector:
    """``model``: e.g. yolov8s-worldv2 (YOLO-World) or yoloe-11s (YOLOE); ``weights``: a .pt path,
    None (search the usual folders) or "random"; ``imgsz``: network input side (multiple of 32), the
    longer image side is resized to it and the shorter padded to a multiple of 32 (ultralytics' rect
    letterbox); ``text_model``: YOLOE's TorchScript text encoder file (default: searched by name);
    ``clip_dir``: local CLIP ViT-B/32 folder (YOLO-World's text encoder; YOLOE's tokenizer when the ``clip``
    package is absent);
    ``conf`` / ``iou`` / ``max_detections``: NMS score threshold, IoU threshold and cap;
    ``agnostic_nms``: one NMS over all classes (None: as ultralytics' predict, YOLOE yes, YOLO-World no)."""

    def __init__(self, model: str = "yolov8s-worldv2", weights: Optional[str] = None, device: str = "auto",
                 text_embeddings: Optional[str] = None, clip_dir: Optional[str] = None,
                 text_model: Optional[str] = None, imgsz: int = 640,
                 conf: float = 0.25, iou: float = 0.5, max_detections: int = 50,
                 agnostic_nms: Optional[bool] = None, name: str = "yolo_world"):
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
        self.text_embeddings, self.clip_dir, self.text_model = text_embeddings, clip_dir, text_model
        self.imgsz, self.conf, self.iou, self.max_det = imgsz, conf, iou, max_detections
        self.agnostic = self.is_yoloe if agnostic_nms is None else bool(agnostic_nms)
        self.labels: list[str] = []

    def _text_features(self, labels: list[str]) -> np.ndarray:
        """The text model's vectors (N, 512): CLIP ViT-B/32 (YOLO-World) or MobileCLIP (YOLOE), before RepRTA.
        Random weights without a text source give random unit vectors."""
        if self.random and not (self.text_embeddings or self.text_model or self.clip_dir):
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
            if self.is_yoloe:
                kind = getattr(self.net, "text_model", "mobileclip:blt")
                if kind not in YOLOE_TEXT_MODELS:
                    raise InvalidInputError(f"{self.name}: unknown YOLOE text model {kind!r} "
                                            f"(known: {sorted(YOLOE_TEXT_MODELS)}); give 'text_embeddings'")
                spec = WeightSpec(YOLOE_TEXT_MODELS[kind], url=f"{ASSETS_RELEASE_URL}/{YOLOE_TEXT_MODELS[kind]}")
                path = find_weights(spec, self.text_model, f"detector '{self.name}' text encoder")
                return mobileclip_text_features(labels, path, self.clip_dir, self.device)
            return clip_text_embeddings(labels, self.clip_dir, self.device)
        except MissingWeightsError as exc:
            source = "YOLOE's MobileCLIP text model" if self.is_yoloe else "CLIP ViT-B/32"
            raise MissingWeightsError(f"{exc} Alternatively give 'text_embeddings': an .npz with 'labels' and "
                                      f"'embeddings' (N, 512) from {source}.") from exc

    def class_embeddings(self, labels: list[str]) -> Any:
        """The class embeddings (1, N, 512) the network classifies with: ``txt_feats`` for YOLO-World,
        the head's RepRTA of the text features for YOLOE (``YOLOEModel.get_text_pe``)."""
        torch = self.torch
        pe = torch.as_tensor(self._text_features(labels), dtype=torch.float32, device=self.device)[None]
        if self.is_yoloe:
            with torch.no_grad():
                pe = self.net.model[-1].get_tpe(pe)
        return pe

    def set_vocabulary(self, labels: Sequence[str]) -> None:
        self.labels = [str(x) for x in labels]
        if not self.labels:
            raise InvalidInputError(f"{self.name}: empty vocabulary")
        pe = self.class_embeddings(self.labels)
        if self.is_yoloe:
            self.net.set_classes(self.labels, pe)
        else:
            self.net.txt_feats = pe
            self.net.model[-1].nc = len(self.labels)
            self.net.names = dict(enumerate(self.labels))

    def _letterbox(self, rgb: np.ndarray) -> tuple[Any, tuple[int, int], tuple[int, int]]:
        """ultralytics' predict letterbox (``LetterBox(auto=True)``): longer side to ``imgsz`` (cv2 bilinear),
        padding to a multiple of the stride split around the image, grey 114. Returns the network input,
        the resized size (w, h) and the (left, top) padding."""
        import cv2

        h, w = rgb.shape[:2]
        r = min(self.imgsz / h, self.imgsz / w)
        nw, nh = max(round(w * r), 1), max(round(h * r), 1)
        stride = int(max(self.net.stride))
        dw, dh = ((self.imgsz - nw) % stride) / 2, ((self.imgsz - nh) % stride) / 2
        top, bottom, left, right = round(dh - 0.1), round(dh + 0.1), round(dw - 0.1), round(dw + 0.1)
        img = rgb if (w, h) == (nw, nh) else cv2.resize(rgb, (nw, nh), interpolation=cv2.INTER_LINEAR)
        img = cv2.copyMakeBorder(img, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(114, 114, 114))
        x = self.torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))[None]).to(self.device).float() / 255.0
        return x, (nw, nh), (left, top)

    def detect(self, rgb: np.ndarray) -> list[Detection]:
        if not self.labels:
            raise InvalidInputError(f"{self.name}: call set_vocabulary(labels) before detect()")
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise InvalidInputError(f"{self.name}: image must be (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
        nms = import_torch_stack("ultralytics.utils.nms", "perception", "ultralytics")
        x, (nw, nh), (left, top) = self._letterbox(rgb)
        with self.torch.no_grad():
            pred = self.net(x)
            pred = pred[0] if isinstance(pred, (list, tuple)) else pred
            det = nms.non_max_suppression(pred[:, : 4 + len(self.labels)], self.conf, self.iou,
                                          agnostic=self.agnostic, max_det=self.max_det)[0].cpu().numpy()
        h, w = rgb.shape[:2]
        gx, gy = nw / w, nh / h  # per-axis gains of the rounded resize, as ops.scale_boxes
        out = []
        for x0, y0, x1, y1, score, cls in det[:, :6]:
            box = (float(np.clip((x0 - left) / gx, 0, w)), float(np.clip((y0 - top) / gy, 0, h)),
                   float(np.clip((x1 - left) / gx, 0, w)), float(np.clip((y1 - top) / gy, 0, h)))
            if box[2] > box[0] and box[3] > box[1]:
                out.append(Detection(box, self.labels[int(cls)], float(min(1.0, score))))
        return out


def build(cfg: Mapping[str, Any]) -> YoloWorldDetector:
    kw = dict(cfg)
    if kw.get("name") == "yoloe":
        kw.setdefault("model", "yoloe-11s")
    return YoloWorldDetector(**kw)
