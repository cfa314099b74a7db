"""What both Grounding DINO detectors share: `grounding_dino` (transformers' port) and
`grounding_dino_ida` (the authors' package, groundingdino-py).

The vocabulary (Objects365 by default, 365 labels) does not fit one 256-token prompt, so it
is split into prompts "label . label . ..." that each fit; the prompts of one image run as one
batch (``prompt_batch`` prompts per forward pass, the image repeated). Per query box the score of
a label = max sigmoid logit over the label's tokens; the best label above ``box_threshold`` wins.

Where this differs from the official post-processing (groundingdino.util.inference.predict and
transformers' post_process_grounded_object_detection, both: box score = max sigmoid over ALL
token positions, phrase = the tokens above ``text_threshold``): a box is kept and named only by
the tokens of a label, never by "[CLS]", "." or "[SEP]", which name nothing; boxes are clipped to
the image. Everything else (resizing, normalisation, cxcywh boxes, sigmoid) is the official one
(tests/official_gdino.py, in tests/test_perception_official.py).

Suppression is class-agnostic: one object named by several prompts (or by several queries of
one prompt) with different labels is one detection (`suppress`).
A subclass of `PromptedDetector` only builds its model and runs one batched forward.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._compat.device import resolve_device
from ..errors import InvalidInputError
from .base import Detection
from .tracks import LabelVotes, box_ious
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
    tokens = [tok for _, t in spans for tok in t]
    owner = [i for i, (_, t) in enumerate(spans) for _ in t]  # the label each of those tokens belongs to
    if not tokens:
        return prob.new_zeros(prob.shape[0]), torch.zeros(prob.shape[0], dtype=torch.long, device=prob.device)
    gathered = prob[:, torch.tensor(tokens, device=prob.device)]
    index = torch.tensor(owner, device=prob.device).expand(prob.shape[0], -1)
    # one segment max over all labels at once (a label's score = its best token; no tokens: 0)
    per_label = prob.new_zeros(prob.shape[0], len(spans)).scatter_reduce(1, index, gathered, reduce="amax",
                                                                         include_self=False)
    return per_label.max(dim=1)


def resized_hw(h: int, w: int, image_size: int, max_size: int, long_from_raw: bool) -> tuple[int, int]:
    """The official resize target (height, width): shortest side ``image_size`` unless the longest
    would pass ``max_size``; the longest side is truncated, not rounded. When ``max_size`` binds,
    groundingdino-py rounds the shortest side first and derives the longest from it
    (``long_from_raw=False``); transformers derives the longest from the unrounded size (True)."""
    short, long = float(min(h, w)), float(max(h, w))
    size, raw = float(image_size), None
    if long / short * size > max_size:
        raw = max_size * short / long
        size = float(int(round(raw)))
    if min(h, w) == size:
        return h, w
    new_long = int((raw if long_from_raw and raw is not None else size) * long / short)
    return (int(size), new_long) if h <= w else (new_long, int(size))


def preprocess(torch: Any, rgb: np.ndarray, hw: tuple[int, int], device: str) -> Any:
    """(1, 3, h, w) normalised tensor of ``rgb`` resized (PIL bilinear) to ``hw``."""
    from PIL import Image

    nh, nw = hw
    image = Image.fromarray(rgb)
    if (nh, nw) != rgb.shape[:2]:
        image = image.resize((nw, nh), Image.BILINEAR)
    x = (np.asarray(image, np.float32) / 255 - MEAN) / STD
    return torch.from_numpy(x.transpose(2, 0, 1)[None].copy()).to(device)


def boxes_to_pixels(cxcywh: np.ndarray, w: int, h: int) -> np.ndarray:
    """Normalised (cx, cy, w, h) boxes -> xyxy pixels of a w x h image, clipped to it."""
    xyxy = np.stack([cxcywh[:, 0] - cxcywh[:, 2] / 2, cxcywh[:, 1] - cxcywh[:, 3] / 2,
                     cxcywh[:, 0] + cxcywh[:, 2] / 2, cxcywh[:, 1] + cxcywh[:, 3] / 2], 1)
    return np.clip(xyxy * [w, h, w, h], 0, [w, h, w, h]).reshape(-1, 4)


def suppress(boxes: np.ndarray, scores: np.ndarray, labels: Sequence[str], iou: float,
             max_detections: int) -> list[Detection]:
    """Class-agnostic greedy NMS with a label vote, best first, at most ``max_detections``.

    The best remaining box and every remaining box overlapping it with IoU >= ``iou`` (whatever its
    prompt or label) are one object. Its box is the best box; its label is the one with the largest
    sum of scores over the group (`tracks.LabelVotes`, the rule the trackers use across frames);
    its score is the best score of a box carrying that label. Empty boxes are dropped first."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    scores = np.asarray(scores, np.float64)
    ok = (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    order = [int(i) for i in np.argsort(-scores, kind="stable") if ok[i]]
    out: list[Detection] = []
    while order and len(out) < max_detections:
        top = order[0]
        overlap = box_ious(boxes[top], boxes[order]) >= iou
        group = [i for i, hit in zip(order, overlap) if hit] or [top]
        order = [i for i, hit in zip(order, overlap) if not hit and i != top]
        votes = LabelVotes()
        for i in group:
            votes.add(labels[i], scores[i])
        label = votes.label
        score = max(scores[i] for i in group if labels[i] == label)
        out.append(Detection(tuple(float(v) for v in boxes[top]), label, float(score)))
    return out


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
    """Shared `Detector` logic. A subclass sets ``name``, ``long_from_raw`` (`resized_hw`),
    ``self.torch``, ``self.tokenizer`` and implements `_forward(pixels, prompts)` -> (token
    probabilities (prompts, queries, tokens), normalised cxcywh boxes (prompts, queries, 4)) for
    one image (pixels (1, 3, h, w)) and several prompts, and `_max_text_len()`; in random mode
    (``self.model is None``) `_build_random(labels)` builds model and tokenizer once the vocabulary
    is known."""

    name = "grounding_dino"
    long_from_raw = True
    random_archs = tuple(a.value for a in RandomArch)  # ("toy", "full")

    def __init__(self, device: str, box_threshold: float, nms_iou: float, image_size: int, max_size: int,
                 max_detections: int, random_arch: str, prompt_batch: int):
        if random_arch not in self.random_archs:
            raise InvalidInputError(f"{self.name} random_arch must be one of {self.random_archs}, got {random_arch!r}")
        if int(prompt_batch) < 1:
            raise InvalidInputError(f"{self.name} prompt_batch must be >= 1, got {prompt_batch!r}")
        self.device, self.random_arch = resolve_device(device, f"{self.name} device"), RandomArch(random_arch)
        self.box_threshold, self.nms_iou, self.max_detections = box_threshold, nms_iou, max_detections
        self.image_size, self.max_size, self.prompt_batch = image_size, max_size, int(prompt_batch)
        self.model: Any = None
        self.tokenizer: Any = None
        self._prompts: list[Prompt] = []

    def _build_random(self, labels: list[str]) -> None:
        raise NotImplementedError

    def _max_text_len(self) -> int:
        raise NotImplementedError

    def _forward(self, pixels: Any, prompts: Sequence[Prompt]) -> tuple[Any, Any]:
        raise NotImplementedError

    def set_vocabulary(self, labels: Sequence[str]) -> None:
        labels = [str(lab).strip() for lab in labels if str(lab).strip()]
        if not labels:
            raise InvalidInputError(f"{self.name}: empty vocabulary")
        if self.model is None:  # random mode: the tokenizer's vocabulary is built from the labels
            self._build_random(labels)
        self._prompts = split_prompts(self.tokenizer, labels, self._max_text_len(), self.name)

    @property
    def prompts(self) -> tuple[Prompt, ...]:
        """The prompts the vocabulary was split into (empty before `set_vocabulary`)."""
        return tuple(self._prompts)

    def processed_hw(self, h: int, w: int) -> tuple[int, int]:
        """The (height, width) an h x w image is resized to before the network."""
        return resized_hw(h, w, self.image_size, self.max_size, self.long_from_raw)

    def detect(self, rgb: np.ndarray) -> list[Detection]:
        if not self._prompts:
            raise InvalidInputError(f"{self.name}: call set_vocabulary(labels) before detect()")
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise InvalidInputError(f"{self.name}: image must be (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
        torch = self.torch
        h, w = rgb.shape[:2]
        pixels = preprocess(torch, rgb, self.processed_hw(h, w), self.device)
        boxes, scores, labels = [], [], []
        with torch.no_grad():
            for first in range(0, len(self._prompts), self.prompt_batch):
                prompts = self._prompts[first:first + self.prompt_batch]
                probs, cxcywhs = self._forward(pixels, prompts)
                for prompt, prob, cxcywh in zip(prompts, probs, cxcywhs):
                    best, idx = label_scores(torch, prob, prompt.spans)
                    keep = best > self.box_threshold
                    boxes.append(boxes_to_pixels(cxcywh[keep].float().cpu().numpy(), w, h))
                    scores.append(best[keep].float().cpu().numpy())
                    labels += [prompt.spans[int(i)][0] for i in idx[keep]]
        return suppress(np.concatenate(boxes), np.concatenate(scores), labels, self.nms_iou, self.max_detections)
