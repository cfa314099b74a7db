"""Scene tag per frame (kitchen, living room, street, ...): CLIP image-text similarity over
place prompts, or a trivial fallback that tags nothing (places then come from positions only)."""
from __future__ import annotations

import zlib
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .._compat.device import resolve_device
from .._compat.torchvision_cpu import import_torch_stack
from ..errors import InvalidInputError
from .weights import RANDOM, RandomArch, find_hf_model_dir

DEFAULT_PLACES = ("kitchen", "living room", "bedroom", "bathroom", "dining room", "office", "corridor",
                  "staircase", "garage", "shop", "supermarket", "restaurant", "street", "park", "garden",
                  "parking lot", "classroom", "laboratory", "gym", "car", "laundry room")
PROMPT = "a photo of a {place}"  # CLIP's zero-shot prompt for one place
CLIP_REPO = "openai/clip-vit-base-patch32"


def clip_image_processor(image_size: int, folder: Optional[Any] = None) -> Any:
    """transformers' ``CLIPImageProcessor``: a checkpoint folder's own, else its defaults (those of
    openai/clip-vit-base-patch32) at ``image_size``."""
    tf = import_torch_stack("transformers", "vlm")
    if folder is not None:
        return tf.CLIPImageProcessor.from_pretrained(folder)
    return tf.CLIPImageProcessor(size={"shortest_edge": image_size},
                                 crop_size={"height": image_size, "width": image_size})


class FallbackSceneTagger:
    """Always the same tag ('unknown' = no tag); for pipelines without an image-text model."""

    name = "fallback"

    def __init__(self, tag: str = "unknown"):
        self._tag = tag

    def tag(self, rgb: np.ndarray) -> tuple[str, float]:
        return self._tag, 0.0


class ClipSceneTagger:
    """Zero-shot place classification: softmax of CLIP similarities to "a photo of a {place}".

    ``weights``: a local CLIP folder (Hugging Face layout) or the cached ``openai/clip-vit-base-patch32``;
    ``"random"`` builds a random CLIP (``random_arch``: "toy" tiny, "full" ViT-B/32; tags are meaningless).
    ``every``: re-tag every n-th call and repeat the last tag in between (places change slowly).
    Frames are preprocessed by transformers' ``CLIPImageProcessor`` (the checkpoint's own settings; for
    random weights its defaults at the model's input size): shorter side to the input size (bicubic),
    centre crop, rescale, CLIP mean/std - so a non-square frame is cropped, never squashed.
    """

    name = "clip"

    def __init__(self, weights: Optional[str] = None, places: Sequence[str] = DEFAULT_PLACES,
                 device: str = "auto", every: int = 1, min_score: float = 0.0, random_arch: str = RandomArch.TOY):
        device = resolve_device(device, "scene_tagger 'clip' device")
        self.torch = import_torch_stack("torch", "vlm")
        tf = import_torch_stack("transformers", "vlm")
        if not places:
            raise InvalidInputError("scene_tagger 'clip' needs at least one place name")
        self.places, self.device, self.every, self.min_score = list(places), device, max(1, int(every)), min_score
        if weights == RANDOM and random_arch == RandomArch.FULL:  # ViT-B/32 layout, for timing
            self.model, self.tokenizer = tf.CLIPModel(tf.CLIPConfig()), None
        elif weights == RANDOM:
            cfg = tf.CLIPConfig(text_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                                             "num_attention_heads": 2, "vocab_size": 1000,
                                             "bos_token_id": 998, "eos_token_id": 999, "pad_token_id": 0},
                                vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                                               "num_attention_heads": 2, "image_size": 64, "patch_size": 16},
                                projection_dim=16)
            self.model, self.tokenizer = tf.CLIPModel(cfg), None
        else:
            folder = find_hf_model_dir(CLIP_REPO, weights, "scene_tagger 'clip'")
            self.model = tf.CLIPModel.from_pretrained(folder)
            self.tokenizer = tf.AutoTokenizer.from_pretrained(folder)
        self.model.eval().to(device)
        self.image_size = int(self.model.config.vision_config.image_size)
        self.processor = clip_image_processor(self.image_size, None if self.tokenizer is None else folder)
        self.prompts = [PROMPT.format(place=p) for p in self.places]
        self.embed_places()
        self._calls, self._last = 0, ("unknown", 0.0)

    def embed_places(self) -> None:
        """(Re)compute the unit text features of the place prompts with the current model."""
        with self.torch.no_grad():
            self._text = self._embed_text(self.prompts)

    @property
    def place_features(self) -> Any:
        """The unit text features of the place prompts (a tensor, one row per place of ``places``)."""
        return self._text

    def _embed_text(self, prompts: list[str]) -> Any:
        if self.tokenizer is None:  # random model: stable hash ids, no tokenizer files needed
            vocab = self.model.config.text_config.vocab_size
            ids = [[zlib.crc32(w.encode()) % (vocab - 2) + 1 for w in p.split()] for p in prompts]
            n = max(map(len, ids))
            input_ids = self.torch.tensor([i + [0] * (n - len(i)) for i in ids])
            mask = self.torch.tensor([[1] * len(i) + [0] * (n - len(i)) for i in ids])
        else:
            enc = self.tokenizer(prompts, padding=True, return_tensors="pt")
            input_ids, mask = enc["input_ids"], enc["attention_mask"]
        feats = _features(self.model.get_text_features(input_ids=input_ids.to(self.device),
                                                       attention_mask=mask.to(self.device)))
        return feats / feats.norm(dim=-1, keepdim=True)

    def _pixels(self, rgb: np.ndarray) -> Any:
        """(1, 3, S, S) CLIP input of an (H, W, 3) uint8 frame."""
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise InvalidInputError(f"scene_tagger 'clip': image must be (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
        return self.processor(images=rgb, return_tensors="pt")["pixel_values"].to(self.device)

    def tag(self, rgb: np.ndarray) -> tuple[str, float]:
        self._calls += 1
        if (self._calls - 1) % self.every:
            return self._last
        with self.torch.no_grad():
            img = _features(self.model.get_image_features(pixel_values=self._pixels(rgb)))
            img = img / img.norm(dim=-1, keepdim=True)
            probs = (100.0 * img @ self._text.T).softmax(dim=-1)[0]
        i = int(probs.argmax())
        score = float(probs[i])
        self._last = (self.places[i], score) if score >= self.min_score else ("unknown", score)
        return self._last


def _features(out: Any) -> Any:
    """transformers 5 may return a model output instead of a tensor from get_*_features."""
    return out if hasattr(out, "norm") else out.pooler_output


def build(cfg: Mapping[str, Any]) -> Any:
    kw = {k: v for k, v in cfg.items() if k != "name"}
    return FallbackSceneTagger(**kw) if cfg.get("name") == "fallback" else ClipSceneTagger(**kw)
