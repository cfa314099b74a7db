"""Open-vocabulary detection with Grounding DINO (transformers' maintained implementation).

Prompt splitting, label scoring, preprocessing and class-agnostic suppression are shared with the
groundingdino-py backend (`grounding_dino_ida.py`) in `grounding_common.py`.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from .._compat.torchvision_cpu import import_torch_stack
from ..errors import InvalidInputError
from .grounding_common import Prompt, PromptedDetector, tiny_bert_config, word_tokenizer
from .weights import RANDOM, RandomArch, find_hf_model_dir

MODELS = {"tiny": "IDEA-Research/grounding-dino-tiny", "base": "IDEA-Research/grounding-dino-base"}


def random_model(tf: Any, vocab_words: Sequence[str], full: bool = False) -> tuple[Any, Any]:
    """Grounding DINO with random weights and a word-level tokenizer of the labels, without any
    download: ``full`` = the grounding-dino-tiny architecture (Swin-T + BERT-base, for timing),
    else a 3-stage Swin + 1-layer BERT toy (for tests)."""
    tokenizer = word_tokenizer(tf, vocab_words)
    if full:
        return tf.GroundingDinoForObjectDetection(tf.GroundingDinoConfig()), tokenizer
    backbone = tf.SwinConfig(embed_dim=16, depths=[1, 1, 1], num_heads=[1, 1, 1], window_size=4,
                             out_features=["stage1", "stage2", "stage3"])
    cfg = tf.GroundingDinoConfig(backbone_config=backbone, text_config=tiny_bert_config(tf, len(tokenizer)),
                                 d_model=32, num_queries=30, encoder_layers=1, decoder_layers=2,
                                 encoder_ffn_dim=64, decoder_ffn_dim=64, encoder_attention_heads=2,
                                 decoder_attention_heads=2, num_feature_levels=4, encoder_n_points=2,
                                 decoder_n_points=2)
    return tf.GroundingDinoForObjectDetection(cfg), tokenizer


class GroundingDinoDetector(PromptedDetector):
    """``model``: tiny | base (Hugging Face repos IDEA-Research/grounding-dino-*); ``weights``: a local
    folder, None (Hugging Face cache) or "random" (``random_arch``: "toy" for tests, "full" for timing).
    ``image_size``: shortest image side fed to the model; ``prompt_batch``: prompts per forward pass
    (the Objects365 vocabulary is 4 prompts: one pass per image)."""

    name = "grounding_dino"

    def __init__(self, model: str = "tiny", weights: Optional[str] = None, device: str = "auto",
                 box_threshold: float = 0.35, nms_iou: float = 0.5, image_size: int = 800,
                 max_size: int = 1333, max_detections: int = 50, random_arch: str = RandomArch.TOY,
                 prompt_batch: int = 4):
        self.torch = import_torch_stack("torch", "perception")
        self.tf = import_torch_stack("transformers", "vlm")
        if model not in MODELS:
            raise InvalidInputError(f"grounding_dino model must be one of {sorted(MODELS)}, got {model!r}")
        super().__init__(device, box_threshold, nms_iou, image_size, max_size, max_detections, random_arch,
                         prompt_batch)
        self.repo, self.weights = MODELS[model], weights
        if weights != RANDOM:
            folder = find_hf_model_dir(self.repo, weights, f"detector 'grounding_dino' ({model})")
            self.model = self.tf.GroundingDinoForObjectDetection.from_pretrained(folder)
            self.tokenizer = self.tf.AutoTokenizer.from_pretrained(folder)
            self.model.eval().to(self.device)

    def _build_random(self, labels: list[str]) -> None:
        self.model, self.tokenizer = random_model(self.tf, labels, self.random_arch == RandomArch.FULL)
        self.model.eval().to(self.device)

    def _max_text_len(self) -> int:
        return int(self.model.config.max_text_len)

    def _forward(self, pixels: Any, prompts: Sequence[Prompt]) -> tuple[Any, Any]:
        enc = self.tokenizer([p.text for p in prompts], padding="longest", return_tensors="pt")
        out = self.model(pixel_values=pixels.repeat(len(prompts), 1, 1, 1),
                         **{k: v.to(self.device) for k, v in enc.items()})
        return out.logits.sigmoid(), out.pred_boxes


def build(cfg: Mapping[str, Any]) -> GroundingDinoDetector:
    return GroundingDinoDetector(**{k: v for k, v in cfg.items() if k != "name"})
