"""MLLM answerer running a local vision-language model with transformers (Qwen2.5-VL, Qwen3-VL).

Weights come from a local directory or the Hugging Face cache, never from the network
(``local_files_only=True``). bf16 on GPU, fp32 on CPU. Questions are answered in batches with
left padding. Per-option probabilities come from the next-token distribution at the step where
the model writes its option letter (the first step if it writes none), summed over the letter's
token variants ("B", " B") and renormalised over the options.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from .._compat.device import check_device, resolve_device
from .._lazy import require
from ..errors import BackendError, InvalidInputError, MissingWeightsError
from ..types import OPTION_LETTERS
from ..validation import parse_options
from .base import Answer, QueryContext
from .parsing import finish_answer, letter_of_token
from .prompts import Prompt, build_prompt, keyframe_image

TESTED_MODEL_TYPES = ("qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe")


def ensure_vision_imports() -> None:
    """Make torchvision importable on CPU torch before transformers' vision classes load."""
    from .._compat.torchvision_cpu import ensure_torchvision_importable

    ensure_torchvision_importable()


@dataclass(frozen=True)
class TransformersVLConfig:
    """``model``: a local checkpoint directory, or a Hugging Face repo id already in the cache
    (e.g. "Qwen/Qwen3-VL-8B-Instruct"). ``device``: auto | cpu | cuda | cuda:N. ``dtype``: auto
    (bf16 on GPU, fp32 on CPU) | bfloat16 | float16 | float32."""

    model: str = ""
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 4
    max_new_tokens: int = 16
    max_keyframes: int = 4
    max_image_side: int = 640
    use_hint: bool = True
    revision: Optional[str] = None
    cache_dir: Optional[str] = None

    def __post_init__(self) -> None:
        if not self.model:
            raise InvalidInputError("answerer option 'model' is required for the transformers answerer: a local "
                                    "checkpoint directory or a Hugging Face repo id already downloaded")
        if self.batch_size < 1 or self.max_new_tokens < 1 or self.max_image_side < 28:
            raise InvalidInputError("transformers answerer: batch_size and max_new_tokens must be >= 1, "
                                    f"max_image_side >= 28 (got {self.batch_size}, {self.max_new_tokens}, "
                                    f"{self.max_image_side})")
        check_device(self.device, "transformers answerer option 'device'")



# a file in a checkpoint folder whose weights are random (answerers/tiny.py writes it): answers get Flag.RANDOM_WEIGHTS
RANDOM_WEIGHTS_MARKER = "directme-random-weights.txt"


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", ".", "~")) or model.count("/") != 1 or "\\" in model


def resolve_model_dir(model: str, cache_dir: Optional[str] = None, revision: Optional[str] = None) -> Path:
    """Local directory holding ``model`` (a path, or a repo id in the HF cache) or MissingWeightsError."""
    p = Path(model).expanduser()
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise MissingWeightsError(f"{p} has no config.json: not a transformers checkpoint directory "
                                      "(expected config.json, *.safetensors, tokenizer and processor files)")
        if not any(p.glob("*.safetensors")) and not any(p.glob("*.bin")):
            raise MissingWeightsError(f"{p} has a config.json but no *.safetensors / *.bin weight files")
        return p
    if _looks_like_path(model):
        raise MissingWeightsError(f"model directory {p} does not exist; set answerer option 'model' to a "
                                  "downloaded checkpoint directory")
    hub = require("huggingface_hub", "vlm", "huggingface-hub")
    try:
        return Path(hub.snapshot_download(model, revision=revision, cache_dir=cache_dir, local_files_only=True))
    except Exception as exc:  # LocalEntryNotFoundError and friends: the repo is not cached
        raise MissingWeightsError(
            f"weights of {model!r} are not in the Hugging Face cache ({cache_dir or hub.constants.HF_HUB_CACHE}) "
            f"and directme never downloads at run time. On a machine with network run "
            f"`hf download {model}` (or `hf download {model} --local-dir DIR` and set model: DIR)") from exc


def _pick_device_dtype(torch, device: str, dtype: str):
    device = resolve_device(device, "transformers answerer option 'device'")
    if dtype == "auto":
        return device, (torch.bfloat16 if device.startswith("cuda") else torch.float32)
    if not hasattr(torch, dtype):
        raise InvalidInputError(f"transformers answerer: unknown dtype {dtype!r} (bfloat16 | float16 | float32)")
    return device, getattr(torch, dtype)


def chat_messages(prompt: Prompt) -> list[dict]:
    """The prompt in the transformers chat format (image parts stand where their keyframe goes)."""
    content = [{"type": "text", "text": p[1]} if p[0] == "text" else {"type": "image"} for p in prompt.parts]
    return [{"role": "system", "content": [{"type": "text", "text": prompt.system}]},
            {"role": "user", "content": content}]


class TransformersVLAnswerer:
    """Answers with a local VLM; the model loads on first use (or ``load()``)."""

    def __init__(self, config: TransformersVLConfig):
        self.config = config
        self.model_dir = resolve_model_dir(config.model, config.cache_dir, config.revision)
        self.name = f"transformers:{Path(config.model).name or config.model}"
        # components with random weights (the Agent flags every answer); see RANDOM_WEIGHTS_MARKER
        self.random_weights = ("answerer",) if (Path(self.model_dir) / RANDOM_WEIGHTS_MARKER).is_file() else ()
        self._model = None
        self._processor = None
        self._letter_ids: dict[str, list[int]] = {}
        # one generation at a time: the processor's tokenizer is not safe to share between threads
        self._lock = threading.RLock()

    def load(self) -> "TransformersVLAnswerer":
        with self._lock:
            return self._load()

    def _load(self) -> "TransformersVLAnswerer":
        if self._model is not None:
            return self
        t0 = time.perf_counter()
        ensure_vision_imports()
        torch = require("torch", "vlm")
        transformers = require("transformers", "vlm")
        device, dtype = _pick_device_dtype(torch, self.config.device, self.config.dtype)
        kw = dict(local_files_only=True, revision=self.config.revision)
        try:
            self._processor = transformers.AutoProcessor.from_pretrained(self.model_dir, **kw)
            model = transformers.AutoModelForImageTextToText.from_pretrained(
                self.model_dir, dtype=dtype, device_map=device if device.startswith("cuda") else None, **kw)
        except (OSError, ValueError) as exc:
            raise MissingWeightsError(f"could not load a vision-language model from {self.model_dir}: {exc}") from exc
        self._model = model.to(device).eval() if not device.startswith("cuda") else model.eval()
        self._processor.tokenizer.padding_side = "left"
        tok = self._processor.tokenizer
        for L in OPTION_LETTERS:
            ids = {tok.encode(v, add_special_tokens=False)[0] for v in (L, " " + L)
                   if len(tok.encode(v, add_special_tokens=False)) == 1}
            self._letter_ids[L] = sorted(ids)
        logging.getLogger("directme.loading").info(
            "loading answerer: %s on %s%s ... %.1f s", self.name, device,
            " (random weights)" if self.random_weights else "", time.perf_counter() - t0)
        return self

    @property
    def model_type(self) -> str:
        return str(self.load()._model.config.model_type)

    def answer(self, ctx: QueryContext) -> Answer:
        return self.answer_batch([ctx])[0]

    def answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        with self._lock:
            return self._answer_batch(ctxs)

    def _answer_batch(self, ctxs: Sequence[QueryContext]) -> list[Answer]:
        self.load()
        out: list[Answer] = []
        bs = self.config.batch_size
        for i in range(0, len(ctxs), bs):
            out.extend(self._answer_chunk(list(ctxs[i:i + bs])))
        return out

    def encode(self, prompts: Sequence[Prompt]):
        """Processor inputs for a batch of prompts (left padded; images in prompt order)."""
        proc = self.load()._processor
        texts = [proc.apply_chat_template(chat_messages(p), add_generation_prompt=True, tokenize=False)
                 for p in prompts]
        images = [keyframe_image(kf, self.config.max_image_side) for p in prompts for kf in p.images]
        return proc(text=texts, images=images or None, padding=True, return_tensors="pt")

    def _answer_chunk(self, ctxs: list[QueryContext]) -> list[Answer]:
        torch = require("torch", "vlm")
        prompts = [build_prompt(c, self.config.max_keyframes, self.config.use_hint) for c in ctxs]
        proc = self._processor
        t0 = time.perf_counter()
        try:
            inputs = self.encode(prompts).to(self._model.device)
            with torch.inference_mode():
                gen = self._model.generate(**inputs, max_new_tokens=self.config.max_new_tokens, do_sample=False,
                                           output_logits=True, return_dict_in_generate=True)
        except (RuntimeError, ValueError, IndexError) as exc:
            raise BackendError(f"transformers generation failed with {self.model_dir}: {exc}") from exc
        latency = (time.perf_counter() - t0) / len(ctxs)
        new_ids = gen.sequences[:, inputs["input_ids"].shape[1]:]
        logits = torch.stack(gen.logits, dim=1).float()  # (B, steps, V), raw (before any processor)
        answers = []
        for b, (ctx, prompt) in enumerate(zip(ctxs, prompts)):
            ids = new_ids[b].tolist()
            text = proc.tokenizer.decode(ids, skip_special_tokens=True)
            letter_lp, text_conf = self._scores(logits[b], ids, prompt.letters)
            answers.append(finish_answer(ctx, text, self.name, letter_logprobs=letter_lp,
                                         text_confidence=text_conf, latency_s=latency))
        return answers

    def _scores(self, logits, ids: list[int], letters: str) -> tuple[Optional[dict], Optional[float]]:
        """Per-letter log-probabilities at the step the model writes its letter (MC), or the mean
        token probability of the generated text (open-ended)."""
        torch = require("torch", "vlm")
        logp = torch.log_softmax(logits, dim=-1)
        tok = self._processor.tokenizer
        gen_eos = self._model.generation_config.eos_token_id
        eos = {tok.eos_token_id, tok.pad_token_id, *(gen_eos if isinstance(gen_eos, list) else [gen_eos])}
        n = next((i for i, t in enumerate(ids) if t in eos), len(ids))
        if not letters:
            if n == 0:
                return None, None
            chosen = logp[torch.arange(n), torch.tensor(ids[:n])]
            return None, float(chosen.exp().mean())
        step = next((i for i in range(n) if letter_of_token(tok.decode([ids[i]]), letters)), 0)
        out = {L: float(torch.logsumexp(logp[step, self._letter_ids[L]], dim=0))
               for L in letters if self._letter_ids[L]}
        return out or None, None


def build(cfg: Mapping[str, Any]) -> TransformersVLAnswerer:
    """Factory used by the answerer registry: ``cfg`` is the answerer's ``options`` mapping."""
    return TransformersVLAnswerer(parse_options(TransformersVLConfig, dict(cfg or {}), "transformers answerer options",
                                                "answerer.options"))
