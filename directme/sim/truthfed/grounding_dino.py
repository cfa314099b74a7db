"""Truth-fed stand-in for Grounding DINO: the `grounding_dino` detector (transformers' port) or
`grounding_dino_ida` (groundingdino-py), with its network's forward replaced.

The stand-in returns what a trained Grounding DINO returns for a batch of (image, prompt) pairs:
token logits (batch, queries, max_text_len; -inf past each prompt's tokens) and normalised
(cx, cy, w, h) boxes (batch, queries, 4) in the processed image. Each ground-truth object visible
in the frame being processed (``truth.current_index``), rendered at the network's input
resolution, gets one query per prompt: a high logit on the tokens of its own label where that
label is in the prompt, a lower one on the tokens of similar labels (`catalog.similar_labels`; so
an object is named by several prompt chunks, as a trained model does), a low one elsewhere. The
other queries get very low logits. Everything after the forward - label scoring, suppression
across prompts, pixel boxes - is the detector's own code.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...errors import InvalidInputError
from ...perception.grounding_common import Prompt, PromptedDetector
from ..catalog import similar_labels
from .source import TruthSource

PADDING_BOX = (0.5, 0.5, 0.05, 0.05)  # box of the queries that found nothing (their logits are very low)


class _GroundingTruth:
    """The ground truth of one detector, as logits and boxes per (frame, processed size, prompt)."""

    def __init__(self, backend: PromptedDetector, truth: TruthSource, min_pixels: int, label_logit: float,
                 similar_logit: float, other_logit: float, empty_logit: float, jitter: float, seed: int):
        self.backend, self.truth, self.min_pixels = backend, truth, int(min_pixels)
        self.label_logit, self.similar_logit = float(label_logit), float(similar_logit)
        self.other_logit, self.empty_logit = float(other_logit), float(empty_logit)
        self.jitter, self.seed = float(jitter), int(seed)
        self._objects: dict[tuple[int, int, int], list[tuple[int, str, np.ndarray]]] = {}

    def objects(self, h: int, w: int) -> tuple[int, list[tuple[int, str, np.ndarray]]]:
        """(frame index, [(object id, label, normalised cxcywh)]) of the objects visible in the current
        frame with at least ``min_pixels`` pixels at h x w, largest first."""
        index = self.truth.current_index
        if index is None:
            raise InvalidInputError("truth-fed grounding_dino: no frame registered (TruthSource.register)")
        key = (index, h, w)
        if key not in self._objects:
            ids = self.truth.render(index, self.truth.intrinsics.resized(w, h)).instance_ids
            found, counts = np.unique(ids[ids > 0], return_counts=True)
            order = np.argsort(-counts, kind="stable")
            out = []
            for oid in found[order][counts[order] >= self.min_pixels]:
                ys, xs = np.nonzero(ids == oid)
                x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1  # pixel edges
                box = np.array([(x0 + x1) / 2 / w, (y0 + y1) / 2 / h, (x1 - x0) / w, (y1 - y0) / h])
                out.append((int(oid), self.truth.label(int(oid)), box))
            self._objects = {key: out}  # one frame at a time
        return index, self._objects[key]

    def prompt_logits(self, prompt: Prompt, n_tokens: int, h: int, w: int, queries: int,
                      max_text_len: int) -> tuple[np.ndarray, np.ndarray]:
        """(queries, max_text_len) logits and (queries, 4) boxes of one prompt on the current frame."""
        index, objects = self.objects(h, w)
        logits = np.full((queries, max_text_len), -np.inf, np.float32)
        logits[:, :n_tokens] = self.empty_logit
        boxes = np.tile(np.array(PADDING_BOX, np.float32), (queries, 1))
        for q, (oid, label, box) in enumerate(objects[:queries]):
            own, near = np.random.default_rng([self.seed, index, oid]).normal(0.0, self.jitter, 2)
            similar = set(similar_labels(label))
            logits[q, :n_tokens] = self.other_logit
            for name, tokens in prompt.spans:
                if name == label:
                    logits[q, list(tokens)] = self.label_logit + own
                elif name in similar:
                    logits[q, list(tokens)] = self.similar_logit + near
            boxes[q] = box
        return logits, boxes

    def batch(self, prompts: Sequence[Prompt], h: int, w: int, queries: int, max_text_len: int) -> tuple[Any, Any]:
        torch = self.backend.torch
        rows = [self.prompt_logits(p, int(p.enc["input_ids"].shape[1]), h, w, queries, max_text_len)
                for p in prompts]
        device = self.backend.device
        return (torch.from_numpy(np.stack([r[0] for r in rows])).to(device),
                torch.from_numpy(np.stack([r[1] for r in rows])).to(device))


def _prompt_of(backend: PromptedDetector, key: Any, by: str) -> Prompt:
    for prompt in backend.prompts:
        if (prompt.text if by == "text" else tuple(prompt.enc["input_ids"][0].tolist())) == key:
            return prompt
    raise InvalidInputError(f"truth-fed {backend.name}: a prompt the detector did not build reached the network")


def install(backend: PromptedDetector, truth: TruthSource, min_pixels: int = 30, label_logit: float = 3.0,
            similar_logit: float = 1.0, other_logit: float = -6.0, empty_logit: float = -10.0,
            jitter: float = 0.25, seed: int = 0) -> None:
    """Replace the forward of ``backend``'s network (a `grounding_dino` or `grounding_dino_ida`
    detector whose vocabulary is set) by the ground truth of ``truth``.

    ``min_pixels``: objects with fewer visible pixels at the network's input size are not found;
    ``label_logit``: logit on the tokens of an object's own label (3.0: score 0.95);
    ``similar_logit``: on the tokens of a similar label, in any prompt (1.0: 0.73, above the default
    box threshold 0.35, so an object is also named by the chunk holding a similar label);
    ``other_logit``: on the object's query's other tokens ("[CLS]", ".", other labels);
    ``empty_logit``: on every token of the queries that found no object;
    ``jitter``: standard deviation of the seeded noise added to an object's label and similar logits
    (one draw per frame, object and kind, so batching does not change them); ``seed``: its seed."""
    from ...perception.grounding_dino import GroundingDinoDetector
    from ...perception.grounding_dino_ida import GroundingDinoIdaDetector

    if backend.model is None or not backend.prompts:
        raise InvalidInputError(f"truth-fed {backend.name}: call set_vocabulary(labels) before install()")
    if not similar_logit < label_logit:
        raise InvalidInputError("truth-fed grounding_dino: similar_logit must be below label_logit")
    gt = _GroundingTruth(backend, truth, min_pixels, label_logit, similar_logit, other_logit, empty_logit,
                         jitter, seed)
    model = backend.model
    if isinstance(backend, GroundingDinoIdaDetector):
        def forward(samples: Any, targets: Any = None, **kw: Any) -> dict[str, Any]:
            prompts = [_prompt_of(backend, text, "text") for text in kw["captions"]]
            logits, boxes = gt.batch(prompts, *samples.shape[-2:], int(model.num_queries), int(model.max_text_len))
            return {"pred_logits": logits, "pred_boxes": boxes}
    elif isinstance(backend, GroundingDinoDetector):
        output = backend.tf.models.grounding_dino.modeling_grounding_dino.GroundingDinoObjectDetectionOutput

        def forward(pixel_values: Any, input_ids: Any, attention_mask: Any = None, **_: Any) -> Any:
            mask = attention_mask if attention_mask is not None else input_ids.new_ones(input_ids.shape)
            prompts = [_prompt_of(backend, tuple(ids[m.bool()].tolist()), "ids") for ids, m in zip(input_ids, mask)]
            logits, boxes = gt.batch(prompts, *pixel_values.shape[-2:], int(model.config.num_queries),
                                     int(model.config.max_text_len))
            return output(logits=logits, pred_boxes=boxes, input_ids=input_ids)
    else:
        raise InvalidInputError(f"truth-fed grounding_dino: not a Grounding DINO detector: {type(backend).__name__}")
    model.forward = forward
