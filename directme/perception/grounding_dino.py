"""Open-vocabulary detection with Grounding DINO (transformers' maintained implementation).

The vocabulary (Objects365 by default, 365 labels) does not fit one 256-token prompt, so it
is split into prompts "label . label . ..." that each fit; every prompt is one forward pass
on the same image. Per query box the score of a label = max sigmoid logit over the label's
tokens; the best label above ``box_threshold`` wins, then class-wise NMS.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .._compat.torchvision_cpu import import_torch_stack
from ..errors import InvalidInputError
from .base import Detection
from .weights import RANDOM, find_hf_model_dir

MODELS = {"tiny": "IDEA-Research/grounding-dino-tiny", "base": "IDEA-Research/grounding-dino-base"}
_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
_STD = np.array([0.229, 0.224, 0.225], np.float32)


def random_model(tf: Any, vocab_words: Sequence[str], full: bool = False) -> tuple[Any, Any]:
    """Grounding DINO with random weights and a local word-level tokenizer (written to a temp
    folder), without any download: ``full`` = the grounding-dino-tiny architecture (Swin-T +
    BERT-base, for timing), else a 3-stage Swin + 1-layer BERT toy (for tests)."""
    words = sorted({w for label in vocab_words for w in label.lower().replace("/", " ").split()} | {"."})
    folder = Path(tempfile.mkdtemp(prefix="directme-gdino-tok-"))
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words) + "\n")
    tokenizer = tf.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    if full:
        return tf.GroundingDinoForObjectDetection(tf.GroundingDinoConfig()), tokenizer
    backbone = tf.SwinConfig(embed_dim=16, depths=[1, 1, 1], num_heads=[1, 1, 1], window_size=4,
                             out_features=["stage1", "stage2", "stage3"])
    text = tf.BertConfig(vocab_size=len(words) + 5, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=256)
    cfg = tf.GroundingDinoConfig(backbone_config=backbone, text_config=text, d_model=32, num_queries=30,
                                 encoder_layers=1, decoder_layers=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                 encoder_attention_heads=2, decoder_attention_heads=2, num_feature_levels=4,
                                 encoder_n_points=2, decoder_n_points=2)
    return tf.GroundingDinoForObjectDetection(cfg), tokenizer


class GroundingDinoDetector:
    """``model``: tiny | base (Hugging Face repos IDEA-Research/grounding-dino-*); ``weights``: a local
    folder, None (Hugging Face cache) or "random" (``random_arch``: "toy" for tests, "full" for timing).
    ``image_size``: shortest image side fed to the model."""

    name = "grounding_dino"

    def __init__(self, model: str = "tiny", weights: Optional[str] = None, device: str = "cpu",
                 box_threshold: float = 0.35, nms_iou: float = 0.5, image_size: int = 800,
                 max_size: int = 1333, max_detections: int = 50, random_arch: str = "toy"):
        self.torch = import_torch_stack("torch", "perception")
        self.tf = import_torch_stack("transformers", "vlm")
        if model not in MODELS:
            raise InvalidInputError(f"grounding_dino model must be one of {sorted(MODELS)}, got {model!r}")
        self.repo, self.weights, self.device = MODELS[model], weights, device
        self.box_threshold, self.nms_iou, self.max_detections = box_threshold, nms_iou, max_detections
        self.image_size, self.max_size = image_size, max_size
        if random_arch not in ("toy", "full"):
            raise InvalidInputError(f"grounding_dino random_arch must be 'toy' or 'full', got {random_arch!r}")
        self.random_arch = random_arch
        self.model: Any = None
        self.tokenizer: Any = None
        if weights != RANDOM:
            folder = find_hf_model_dir(self.repo, weights, f"detector 'grounding_dino' ({model})")
            self.model = self.tf.GroundingDinoForObjectDetection.from_pretrained(folder)
            self.tokenizer = self.tf.AutoTokenizer.from_pretrained(folder)
            self.model.eval().to(device)
        self._prompts: list[tuple[Any, list[tuple[str, list[int]]]]] = []

    def set_vocabulary(self, labels: Sequence[str]) -> None:
        labels = [str(lab).strip() for lab in labels if str(lab).strip()]
        if not labels:
            raise InvalidInputError("grounding_dino: empty vocabulary")
        if self.model is None:  # random mode: the tokenizer's vocabulary is built from the labels
            self.model, self.tokenizer = random_model(self.tf, labels, self.random_arch == "full")
            self.model.eval().to(self.device)
        self._prompts = self._split_prompts(labels, int(self.model.config.max_text_len))

    def _split_prompts(self, labels: list[str], max_tokens: int) -> list[tuple[Any, list[tuple[str, list[int]]]]]:
        prompts, chunk = [], []
        for label in labels + [None]:
            trial = chunk + [label] if label is not None else chunk
            enc = self.tokenizer(" . ".join(trial) + " .", return_offsets_mapping=True)
            if label is not None and len(enc["input_ids"]) <= max_tokens:
                chunk = trial
                continue
            if not chunk:
                raise InvalidInputError(f"grounding_dino: label {label!r} alone exceeds {max_tokens} tokens")
            prompts.append(self._encode(chunk))
            chunk = [label] if label is not None else []
        return prompts

    def _encode(self, labels: list[str]) -> tuple[Any, list[tuple[str, list[int]]]]:
        text = " . ".join(labels) + " ."
        enc = self.tokenizer(text, return_offsets_mapping=True, return_tensors="pt")
        offsets = enc.pop("offset_mapping")[0].tolist()
        spans, pos = [], 0
        for label in labels:
            start = text.index(label, pos)
            end = pos = start + len(label)
            toks = [i for i, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end]
            spans.append((label, toks))
        return enc, spans

    def _pixels(self, rgb: np.ndarray) -> tuple[Any, float, float]:
        from PIL import Image

        h, w = rgb.shape[:2]
        s = min(self.image_size / min(h, w), self.max_size / max(h, w))
        nh, nw = max(32, int(round(h * s))), max(32, int(round(w * s)))
        x = (np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.BILINEAR), np.float32) / 255 - _MEAN) / _STD
        return self.torch.from_numpy(x.transpose(2, 0, 1)[None]).to(self.device), w, h

    def detect(self, rgb: np.ndarray) -> list[Detection]:
        if not self._prompts:
            raise InvalidInputError("grounding_dino: call set_vocabulary(labels) before detect()")
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise InvalidInputError(f"grounding_dino: image must be (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
        torch = self.torch
        pixels, w, h = self._pixels(rgb)
        boxes, scores, labels = [], [], []
        with torch.no_grad():
            for enc, spans in self._prompts:
                out = self.model(pixel_values=pixels, **{k: v.to(self.device) for k, v in enc.items()})
                prob = out.logits[0].sigmoid()  # (queries, text tokens)
                per_label = torch.stack([prob[:, t].max(dim=1).values if t else torch.zeros(prob.shape[0])
                                         for _, t in spans], dim=1)
                best, idx = per_label.max(dim=1)
                keep = best > self.box_threshold
                cxcywh = out.pred_boxes[0][keep].float().cpu().numpy()
                xyxy = np.stack([cxcywh[:, 0] - cxcywh[:, 2] / 2, cxcywh[:, 1] - cxcywh[:, 3] / 2,
                                 cxcywh[:, 0] + cxcywh[:, 2] / 2, cxcywh[:, 1] + cxcywh[:, 3] / 2], 1)
                boxes.append(np.clip(xyxy * [w, h, w, h], 0, [w, h, w, h]))
                scores.append(best[keep].cpu().numpy())
                labels += [spans[int(i)][0] for i in idx[keep]]
        return self._nms(np.concatenate(boxes), np.concatenate(scores), labels)

    def _nms(self, boxes: np.ndarray, scores: np.ndarray, labels: list[str]) -> list[Detection]:
        if not len(scores):
            return []
        batched_nms = import_torch_stack("torchvision.ops", "perception").batched_nms
        names = sorted(set(labels))
        ids = self.torch.tensor([names.index(lab) for lab in labels])
        keep = batched_nms(self.torch.from_numpy(boxes).float(), self.torch.from_numpy(scores).float(), ids,
                           self.nms_iou)[: self.max_detections].tolist()
        return [Detection(tuple(float(v) for v in boxes[i]), labels[i], float(scores[i])) for i in keep
                if boxes[i][2] > boxes[i][0] and boxes[i][3] > boxes[i][1]]


def build(cfg: Mapping[str, Any]) -> GroundingDinoDetector:
    return GroundingDinoDetector(**{k: v for k, v in cfg.items() if k != "name"})
