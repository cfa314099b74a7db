"""Open-vocabulary detection with Grounding DINO from the authors' package, groundingdino-py
(import `groundingdino`), as the design card names it; `grounding_dino.py` runs transformers' port.

The architecture comes from the package's own config (GroundingDINO_SwinT_OGC.py for "tiny",
GroundingDINO_SwinB_cfg.py for "base", shipped inside the package), the weights from the authors'
checkpoint (groundingdino_swint_ogc.pth / groundingdino_swinb_cogcoor.pth). The text encoder's
tokenizer and BERT config come from a local bert-base-uncased folder (``bert``, or the usual
weight folders / Hugging Face cache, offline); its BERT weights are in the checkpoint. The
package's own loader would fetch `bert-base-uncased` from the hub: it is bypassed, nothing is
ever downloaded. Deformable attention runs the package's pure-PyTorch path (no C++/CUDA op is
compiled). On transformers 5.x the BERT gets the mask helpers the package expects
(`directme._compat.groundingdino_bert`). Prompts, scoring and NMS: `grounding_common.py`.
"""
from __future__ import annotations

import argparse
import contextlib
import runpy
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

from .._compat.torchvision_cpu import import_torch_stack
from ..errors import BackendError, InvalidInputError, MissingWeightsError
from .grounding_common import Prompt, PromptedDetector, tiny_bert_config, word_tokenizer
from .weights import RANDOM, RandomArch, WeightSpec, describe, find_hf_model_dir, find_weights, hf_download

RELEASES = "https://github.com/IDEA-Research/GroundingDINO/releases/download"
# model -> (config shipped in groundingdino/config/, checkpoint file, release tag)
MODELS = {"tiny": ("GroundingDINO_SwinT_OGC.py", "groundingdino_swint_ogc.pth", "v0.1.0-alpha"),
          "base": ("GroundingDINO_SwinB_cfg.py", "groundingdino_swinb_cogcoor.pth", "v0.1.0-alpha2")}
CHECKPOINT_REPO = "ShilongLiu/GroundingDINO"
BERT_REPOS = ("google-bert/bert-base-uncased", "bert-base-uncased")
BERT_FILES = ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json")  # text encoder: no weights
# inference needs no activation checkpointing (training memory only; weights unaffected)
INFERENCE = {"use_checkpoint": False, "use_transformer_ckpt": False}
# the tests' toy: the package's Swin-T and 256-d transformer (256 is hard-coded in its text
# position embedding), one encoder / two decoder layers, few queries and points, a 1-layer BERT
TOY = {"enc_layers": 1, "dec_layers": 2, "dim_feedforward": 128, "nheads": 4, "num_queries": 30,
       "enc_n_points": 2, "dec_n_points": 2}


def checkpoint_spec(model: str) -> WeightSpec:
    _, filename, tag = MODELS[model]
    return WeightSpec(filename, CHECKPOINT_REPO, f"{RELEASES}/{tag}/{filename}")


def package_config(model: str, config: Optional[str] = None, **overrides: Any) -> argparse.Namespace:
    """The build arguments: the package's config file for ``model`` (or ``config``) plus overrides."""
    if config is None:
        gd = import_torch_stack("groundingdino", "perception", "groundingdino-py")
        config = str(Path(gd.__file__).parent / "config" / MODELS[model][0])
    if not Path(config).is_file():
        raise InvalidInputError(f"grounding_dino_ida: config file {config} not found")
    values = {k: v for k, v in runpy.run_path(str(config)).items() if not k.startswith("_")}
    return argparse.Namespace(**{**values, **INFERENCE, **overrides})


def find_bert_dir(path: Optional[str], what: str) -> Path:
    """A local bert-base-uncased folder with config.json and tokenizer files (never downloaded)."""
    for repo in BERT_REPOS:
        try:
            folder = find_hf_model_dir(repo, path, what)
        except MissingWeightsError:
            continue
        if (folder / "vocab.txt").is_file() or (folder / "tokenizer.json").is_file():
            return folder
    raise MissingWeightsError(
        f"{what}: text encoder folder 'bert-base-uncased' (config.json + vocab.txt or tokenizer.json) not found "
        f"({'given bert ' + str(path) + ', ' if path else ''}$DIRECTME_WEIGHTS_DIR/bert-base-uncased, "
        f"~/.cache/directme/bert-base-uncased, Hugging Face cache); it is never downloaded at run time. Fetch it "
        f"on a machine with network ({hf_download(BERT_REPOS[0], BERT_FILES)}; the BERT weights come from the "
        f"Grounding DINO checkpoint) and pass the folder as 'bert' in the detector config, or use 'weights': 'random'.")


@contextlib.contextmanager
def _text_encoder(tokenizer: Any, bert_config: Any) -> Iterator[None]:
    """While the package builds a model, its text-encoder loaders (hub downloads by name) return
    this tokenizer and a BERT built from this config instead."""
    from .._compat.groundingdino_bert import compat_bert_model

    loaders = import_torch_stack("groundingdino.util.get_tokenlizer", "perception", "groundingdino-py")
    saved = loaders.get_tokenlizer, loaders.get_pretrained_language_model
    loaders.get_tokenlizer = lambda _name: tokenizer
    loaders.get_pretrained_language_model = lambda _name: compat_bert_model(bert_config)
    try:
        yield
    finally:
        loaders.get_tokenlizer, loaders.get_pretrained_language_model = saved


def _interleave_text_mask(layer: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    mask, src = kwargs.get("src_mask"), kwargs.get("src")
    if mask is not None and src is not None and mask.dim() == 3 and mask.shape[0] == src.shape[1] > 1:
        kwargs["src_mask"] = mask.repeat_interleave(layer.nhead, 0)  # batch-major, as MultiheadAttention reads it
    return args, kwargs


def batch_safe(model: Any) -> Any:
    """Make a batch of different captions independent. The package's text-enhancer layer repeats its
    (batch, L, L) attention mask as ``mask.repeat(nhead, 1, 1)`` while torch's attention reads
    (batch * nhead) masks batch-major, so with several captions each caption's heads get other
    captions' masks (IDEA-Research/GroundingDINO issue 294). The masks are expanded batch-major
    before each such layer; one caption (the package's own inference) is unchanged."""
    for layer in model.transformer.encoder.text_layers:
        layer.register_forward_pre_hook(_interleave_text_mask, with_kwargs=True)
    return model


def build_model(args: argparse.Namespace, tokenizer: Any, bert_config: Any) -> Any:
    """The package's GroundingDINO for ``args`` with random weights, text encoder from local objects,
    safe for a batch of captions (`batch_safe`)."""
    args.text_encoder_type = "bert-base-uncased (local)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # timm.models.layers moved (package import)
        warnings.filterwarnings("ignore", "torch.meshgrid", UserWarning)  # the package's Swin
        models = import_torch_stack("groundingdino.models", "perception", "groundingdino-py")
        with _text_encoder(tokenizer, bert_config):
            return batch_safe(models.build_model(args))


def load_checkpoint(torch: Any, model: Any, path: Path, what: str) -> None:
    """Load the authors' checkpoint ({"model": state dict, keys maybe prefixed "module."}) into
    ``model`` (tensors only: no code runs); every parameter must be in it."""
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):  # training args, if saved
            ckpt = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same message
        raise BackendError(f"{what}: cannot read checkpoint {path}: {type(exc).__name__}: {exc}") from exc
    state = ckpt.get("model", ckpt) if isinstance(ckpt, Mapping) else None
    if not isinstance(state, Mapping):
        raise BackendError(f"{what}: {path} holds no state dict (expected {{'model': {{name: tensor}}}})")
    state = {k[7:] if k.startswith("module.") else k: v for k, v in state.items()}
    result = model.load_state_dict(state, strict=False)
    params = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    # the BERT pooler is never used by Grounding DINO; everything else must come from the file
    missing = [k for k in result.missing_keys if k in params and not k.startswith("bert.pooler.")]
    if missing:
        raise BackendError(f"{what}: {path} lacks {len(missing)} parameters of this architecture "
                           f"(e.g. {missing[:3]}); is it the checkpoint of this model / config?")


class GroundingDinoIdaDetector(PromptedDetector):
    """``model``: tiny (Swin-T OGC) | base (Swin-B); ``weights``: the checkpoint (file or folder), None
    (search the usual folders) or "random" (``random_arch``: "toy" for tests, "full" for timing);
    ``bert``: local bert-base-uncased folder (tokenizer + config); ``config``: a config file in the
    package's format instead of the packaged one. ``image_size``: shortest image side fed to the model;
    ``prompt_batch``: prompts per forward pass (the Objects365 vocabulary is 4 prompts: one pass)."""

    name = "grounding_dino_ida"
    long_from_raw = False  # the package's transforms.resize

    def __init__(self, model: str = "tiny", weights: Optional[str] = None, bert: Optional[str] = None,
                 config: Optional[str] = None, device: str = "auto", box_threshold: float = 0.35,
                 nms_iou: float = 0.5, image_size: int = 800, max_size: int = 1333, max_detections: int = 50,
                 random_arch: str = RandomArch.TOY, prompt_batch: int = 4):
        self.torch = import_torch_stack("torch", "perception")
        self.tf = import_torch_stack("transformers", "vlm")
        import_torch_stack("groundingdino", "perception", "groundingdino-py")
        if model not in MODELS:
            raise InvalidInputError(f"grounding_dino_ida model must be one of {sorted(MODELS)}, got {model!r}")
        super().__init__(device, box_threshold, nms_iou, image_size, max_size, max_detections, random_arch,
                         prompt_batch)
        self.model_name, self.weights, self.config = model, weights, config
        if weights != RANDOM:
            what = f"detector 'grounding_dino_ida' ({model})"
            checkpoint = find_weights(checkpoint_spec(model), weights, what)
            folder = find_bert_dir(bert, what)
            self.tokenizer = self.tf.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            bert_config = self.tf.BertConfig.from_pretrained(str(folder), local_files_only=True)
            self.model = build_model(package_config(model, config), self.tokenizer, bert_config)
            load_checkpoint(self.torch, self.model, checkpoint, what)
            self.model.eval().to(self.device)

    def _build_random(self, labels: list[str]) -> None:
        self.tokenizer = word_tokenizer(self.tf, labels)
        if self.random_arch == RandomArch.FULL:  # bert-base-uncased dimensions, the packaged architecture
            args, bert_config = package_config(self.model_name, self.config), self.tf.BertConfig(
                vocab_size=len(self.tokenizer))
        else:
            args, bert_config = package_config(self.model_name, self.config, **TOY), tiny_bert_config(
                self.tf, len(self.tokenizer))
        self.model = build_model(args, self.tokenizer, bert_config).eval().to(self.device)

    def _max_text_len(self) -> int:
        return int(self.model.max_text_len)

    def _forward(self, pixels: Any, prompts: Sequence[Prompt]) -> tuple[Any, Any]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the package's torch.cuda.amp.autocast call
            out = self.model(pixels.repeat(len(prompts), 1, 1, 1), captions=[p.text for p in prompts])
        return out["pred_logits"].sigmoid(), out["pred_boxes"]


def describe_weights(model: str = "tiny", weights: Optional[str] = None, bert: Optional[str] = None) -> str:
    """Where the checkpoint and the BERT folder are, or what to fetch (for `directme doctor`)."""
    try:
        text = str(find_bert_dir(bert, "bert"))
    except MissingWeightsError:
        text = f"not found (fetch: {hf_download(BERT_REPOS[0], BERT_FILES)})"
    return f"{describe(checkpoint_spec(model), weights)}; bert-base-uncased: {text}"


def build(cfg: Mapping[str, Any]) -> GroundingDinoIdaDetector:
    return GroundingDinoIdaDetector(**{k: v for k, v in cfg.items() if k != "name"})
