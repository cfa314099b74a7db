"""Tiny random Qwen2.5-VL / Qwen3-VL models built fully offline, for tests and `directme doctor`.

A real checkpoint directory is produced (config, safetensors, tokenizer, image and video
processor, chat template) so the normal ``from_pretrained`` loading path is exercised. The
tokenizer is a byte-level BPE trained on a few built-in sentences with the ``tokenizers``
library; no hub file is read. Weights are random: outputs are nonsense, plumbing is real.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

from .._lazy import require
from .transformers_vl import RANDOM_WEIGHTS_MARKER, ensure_vision_imports

FAMILIES = ("qwen2_5_vl", "qwen3_vl")

_SPECIAL_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|image_pad|>", "<|video_pad|>",
)

# A minimal Qwen-style chat template (images become <|vision_start|><|image_pad|><|vision_end|>), used
# when no ``chat_template`` is given; tests pass Qwen's own templates (tests/data/).
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' or 'image' in part %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'video' or 'video' in part %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = (
    "The answer is (A). The answer is (B). The answer is (C). The answer is (D). The answer is (E).",
    "Option A Option B Option C Option D Option E. Answer with the letter of the correct option.",
    "Where is the sofa now? It is behind you, front-left of you, at 3 o'clock, 2.5 m away, reachable.",
    "You are a wearable-camera assistant with a spatial memory. Objects, places, your recent path.",
    "kitchen living room bedroom bathroom office street table chair mirror sink lamp phone cup",
    "Keyframe at t=12.0 s. Question time t=30.0 s. last seen moved from to at seconds metres",
)


def build_tokenizer(vocab_size: int = 384, chat_template: Optional[str] = None):
    """A byte-level BPE ``PreTrainedTokenizerFast`` with the Qwen special tokens."""
    tokenizers = require("tokenizers", "vlm")
    transformers = require("transformers", "vlm")
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(_SPECIAL_TOKENS), show_progress=False,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(list(_CORPUS), trainer=trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        unk_token=None, padding_side="left", chat_template=chat_template or CHAT_TEMPLATE)


def _configs(family: str, tok) -> object:
    transformers = require("transformers", "vlm")
    ids = {name: tok.convert_tokens_to_ids(t) for name, t in (
        ("image_token_id", "<|image_pad|>"), ("video_token_id", "<|video_pad|>"),
        ("vision_start_token_id", "<|vision_start|>"), ("vision_end_token_id", "<|vision_end|>"))}
    text = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None)
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64)
    if family == "qwen2_5_vl":
        text["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}
        vision.update(patch_size=14, fullatt_block_indexes=[1], window_size=56)
        return transformers.Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)
    text.update(head_dim=16, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "mrope_section": [4, 2, 2], "mrope_interleaved": True})
    vision.update(patch_size=16, deepstack_visual_indexes=[0], num_position_embeddings=256)
    return transformers.Qwen3VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=False, **ids)


def build_processor(family: str, tok=None, chat_template: Optional[str] = None):
    """Image processor + mandatory video processor + tokenizer + chat template for ``family``."""
    ensure_vision_imports()
    transformers = require("transformers", "vlm")
    tok = tok or build_tokenizer(chat_template=chat_template)
    patch = 14 if family == "qwen2_5_vl" else 16
    size = {"shortest_edge": (2 * patch) ** 2, "longest_edge": (8 * patch) ** 2}  # <= 16 merged tokens/image
    image_proc = transformers.Qwen2VLImageProcessor(patch_size=patch, merge_size=2, temporal_patch_size=2, size=size)
    video_cls = transformers.Qwen2VLVideoProcessor if family == "qwen2_5_vl" else transformers.Qwen3VLVideoProcessor
    video_proc = video_cls(patch_size=patch, merge_size=2, temporal_patch_size=2, size=size)
    cls = transformers.Qwen2_5_VLProcessor if family == "qwen2_5_vl" else transformers.Qwen3VLProcessor
    return cls(image_processor=image_proc, tokenizer=tok, video_processor=video_proc,
               chat_template=chat_template or CHAT_TEMPLATE)


def build_tiny_vl(family: str, out_dir: Union[str, Path], seed: int = 0, chat_template: Optional[str] = None) -> Path:
    """Save a tiny random ``family`` model ("qwen2_5_vl" or "qwen3_vl") with its processor to ``out_dir``;
    ``chat_template``: the Jinja chat template to ship (e.g. the model family's own), else ``CHAT_TEMPLATE``."""
    if family not in FAMILIES:
        raise ValueError(f"unknown tiny family {family!r}; choose one of {FAMILIES}")
    ensure_vision_imports()
    torch = require("torch", "vlm")
    transformers = require("transformers", "vlm")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(chat_template=chat_template)
    config = _configs(family, tok)
    torch.manual_seed(seed)
    cls = (transformers.Qwen2_5_VLForConditionalGeneration if family == "qwen2_5_vl"
           else transformers.Qwen3VLForConditionalGeneration)
    model = cls(config).eval()
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out)
    build_processor(family, tok, chat_template).save_pretrained(out)
    (out / RANDOM_WEIGHTS_MARKER).write_text("random weights: answers are meaningless\n", encoding="utf-8")
    return out
