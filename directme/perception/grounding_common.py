"""What both Grounding DINO detectors share: `grounding_dino` (transformers' port) and
`grounding_dino_ida` (the authors' package, groundingdino-py).

The vocabulary (Objects365 by default, 365 labels) does not fit one 256-token prompt, so it
is split into prompts "label . label . ..." that each fit; every prompt is one forward pass
on the same image. Per query box the score of a label = max sigmoid logit over the label's
tokens; the best label above ``box_threshold`` wins, then class-wise NMS over all prompts.
A subclass of `PromptedDetector` only builds its model and runs one forward per prompt.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._compat.device import resolve_device
from .._compat.torchvision_cpu import import_torch_stack
from ..errors import InvalidInputError
from .base import Detection
from .weights import RandomArch

MEAN = np.array([0.485, 0.456, 0.406], np.float32)  # ImageNet statistics, as both models were trained
STD = np.array([0.229, 0.224, 0.225], np.float32)
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@dataclass(frozen=True, eq=False)
class Prompt:
    """One prompt: its text, the tokenizer's tensors for it, and each label's token positions."""

    text: str
    enc: Any
    spans: tuple[tuple[str, tuple[int, ...]], ...]


def encode_prompt(tokenizer: Any, labels: Sequence[str]) -> Prompt:
    text = " . ".join(labels) + " ."
    enc = tokenizer(text, return_offsets_mapping=True, return_tensors="pt")
    offsets = enc.pop("offset_mapping")[0].tolist()
    spans, pos = [], 0
    for label in labels:
        start = text.index(label, pos)
        end = pos = start + len(label)
        spans.append((label, tuple(i for i, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end)))
    return Prompt(text, enc, tuple(spans))


def split_prompts(tokenizer: Any, labels: Sequence[str], max_tokens: int, who: str) -> list[Prompt]:
    """Greedy split of ``labels`` (in order) into prompts of at most ``max_tokens`` tokens."""
    prompts, chunk = [], []
    for label in list(labels) + [None]:
        trial = chunk + [label] if label is not None else chunk
        if label is not None and len(tokenizer(" . ".join(trial) + " .")["input_ids"]) <= max_tokens:
            chunk = trial
            continue
        if not chunk:
            raise InvalidInputError(f"{who}: label {label!r} alone exceeds {max_tokens} tokens")
        prompts.append(encode_prompt(tokenizer, chunk))
        chunk = [label] if label is not None else []
    return prompts


def label_scores(torch: Any, prob: Any, spans: Sequence[tuple[str, Sequence[int]]]) -> tuple[Any, Any]:
    """(best score, best label index) per query box from token probabilities (queries, tokens)."""
    per_label = torch.stack([prob[:, list(t)].max(dim=1).values if t else prob.new_zeros(prob.shape[0])
                             for _, t in spans], dim=1)
    return per_label.max(dim=1)


def preprocess(torch: Any, rgb: np.ndarray, image_size: int, max_size: int, device: str) -> Any:
    """(1, 3, h, w) normalised tensor, shortest side ``image_size`` and longest <= ``max_size``."""
    from PIL import Image

    h, w = rgb.shape[:2]
    s = min(image_size / min(h, w), max_size / max(h, w))
    nh, nw = max(32, int(round(h * s))), max(32, int(round(w * s)))
    x = (np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.BILINEAR), np.float32) / 255 - MEAN) / STD
    return torch.from_numpy(x.transpose(2, 0, 1)[None].copy()).to(device)


def boxes_to_pixels(cxcywh: np.ndarray, w: int, h: int) -> np.ndarray:
    """Normalised (cx, cy, w, h) boxes -> xyxy pixels of a w x h image, clipped to it."""
    xyxy = np.stack([cxcywh[:, 0] - cxcywh[:, 2] / 2, cxcywh[:, 1] - cxcywh[:, 3] / 2,
                     cxcywh[:, 0] + cxcywh[:, 2] / 2, cxcywh[:, 1] + cxcywh[:, 3] / 2], 1)
    return np.clip(xyxy * [w, h, w, h], 0, [w, h, w, h]).reshape(-1, 4)


def class_nms(torch: Any, boxes: np.ndarray, scores: np.ndarray, labels: list[str], iou: float,
              max_detections: int) -> list[Detection]:
    """Class-wise NMS, best first, at most ``max_detections``; empty boxes are dropped."""
    if not len(scores):
        return []
    batched_nms = import_torch_stack("torchvision.ops", "perception").batched_nms
    names = sorted(set(labels))
    ids = torch.tensor([names.index(lab) for lab in labels])
    keep = batched_nms(torch.from_numpy(boxes).float(), torch.from_numpy(scores).float(), ids,
                       iou)[:max_detections].tolist()
    return [Detection(tuple(float(v) for v in boxes[i]), labels[i], float(scores[i])) for i in keep
            if boxes[i][2] > boxes[i][0] and boxes[i][3] > boxes[i][1]]


def word_tokenizer(tf: Any, labels: Sequence[str]) -> Any:
    """A BERT tokenizer whose vocabulary is the labels' words (random weights: no hub files)."""
    words = sorted({w for label in labels for w in label.lower().replace("/", " ").split()} | {".", "?"})
    with tempfile.TemporaryDirectory(prefix="directme-gdino-tok-") as folder:
        (Path(folder) / "vocab.txt").write_text("\n".join(SPECIAL_TOKENS + words) + "\n")
        return tf.BertTokenizerFast.from_pretrained(folder, local_files_only=True)  # lower-cases, like BERT uncased


def tiny_bert_config(tf: Any, vocab_size: int) -> Any:
    """A 1-layer, 32-wide BERT (the tests' random text encoder)."""
    return tf.BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=256)


class PromptedDetector:
    """Shared `Detector` logic. A subclass sets ``name``, ``self.torch``, ``self.tokenizer`` and
    implements `_forward(pixels, prompt)` -> (token probabilities (queries, tokens), normalised
    cxcywh boxes (queries, 4)) and `_max_text_len()`; in random mode (``self.model is None``)
    `_build_random(labels)` builds model and tokenizer when the vocabulary is known."""

    name = "grounding_dino"
    random_archs = tuple(a.value for a in RandomArch)  # ("toy", "full")

    def __init__(self, device: str, box_threshold: float, nms_iou: float, image_size: int, max_size: int,
                 max_detections: int, random_arch: str):
        if random_arch not in self.random_archs:
            raise InvalidInputError(f"{self.name} random_arch must be one of {self.random_archs}, got {random_arch!r}")
        self.device, self.random_arch = resolve_device(device, f"{self.name} device"), RandomArch(random_arch)
        self.box_threshold, self.nms_iou, self.max_detections = box_threshold, nms_iou, max_detections
        self.image_size, self.max_size = image_size, max_size
        self.model: Any = None
        self.tokenizer: Any = None
        self._prompts: list[Prompt] = []

    def _build_random(self, labels: list[str]) -> None:
        raise NotImplementedError

    def _max_text_len(self) -> int:
        raise NotImplementedError

    def _forward(self, pixels: Any, prompt: Prompt) -> tuple[Any, Any]:
        raise NotImplementedError

    def set_vocabulary(self, labels: Sequence[str]) -> None:
        labels = [str(lab).strip() for lab in labels if str(lab).strip()]
        if not labels:
            raise InvalidInputError(f"{self.name}: empty vocabulary")
        if self.model is None:  # random mode: the tokenizer's vocabulary is built from the labels
            self._build_random(labels)
        self._prompts = split_prompts(self.tokenizer, labels, self._max_text_len(), self.name)

    def detect(self, rgb: np.ndarray) -> list[Detection]:
        if not self._prompts:
            raise InvalidInputError(f"{self.name}: call set_vocabulary(labels) before detect()")
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise InvalidInputError(f"{self.name}: image must be (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
        torch = self.torch
        h, w = rgb.shape[:2]
        pixels = preprocess(torch, rgb, self.image_size, self.max_size, self.device)
        boxes, scores, labels = [], [], []
        with torch.no_grad():
            for prompt in self._prompts:
                prob, cxcywh = self._forward(pixels, prompt)
                best, idx = label_scores(torch, prob, prompt.spans)
                keep = best > self.box_threshold
                boxes.append(boxes_to_pixels(cxcywh[keep].float().cpu().numpy(), w, h))
                scores.append(best[keep].float().cpu().numpy())
                labels += [prompt.spans[int(i)][0] for i in idx[keep]]
        return class_nms(torch, np.concatenate(boxes), np.concatenate(scores), labels, self.nms_iou,
                         self.max_detections)

