"""Locate model weights on this machine: never download, fail with the file to fetch.

Search order for a checkpoint: the explicit ``path`` (a file, or a folder holding it),
``$DIRECTME_WEIGHTS_DIR``, ``~/.cache/directme``, the Hugging Face cache (offline lookup),
the torch hub checkpoint folder. ``weights: "random"`` in a backend config skips the lookup
and keeps the randomly initialised architecture (tests, `directme doctor`, timing).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ..errors import MissingWeightsError
from ..types import TextEnum

RANDOM = "random"


class RandomArch(TextEnum):
    """Architecture built with ``weights: "random"``: a tiny one (tests) or the real layout (timing)."""

    TOY = "toy"
    FULL = "full"

PathLike = Union[str, Path]


@dataclass(frozen=True)
class WeightSpec:
    """Where a checkpoint comes from: a file name, its Hugging Face repo (if any) and a URL hint."""

    filename: str
    hf_repo: Optional[str] = None
    url: Optional[str] = None

    def fetch_hint(self) -> str:
        """The command that fetches it on a machine with network, into a folder searched here."""
        if self.hf_repo:
            return hf_download(self.hf_repo, () if self.filename == "*" else (self.filename,))
        if self.url:
            return f"curl -L --create-dirs -o ~/.cache/directme/{self.filename} {self.url}"
        return f"put {self.filename} in $DIRECTME_WEIGHTS_DIR"


def hf_download(repo: str, files: tuple[str, ...] = ()) -> str:
    """The `hf download` command (huggingface_hub >= 1.0 CLI) fetching ``files`` of ``repo`` (all when empty)
    into the Hugging Face cache, where the lookups here find it."""
    return " ".join(("hf download", repo) + tuple(files))


def search_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("DIRECTME_WEIGHTS_DIR"):
        dirs.append(Path(os.environ["DIRECTME_WEIGHTS_DIR"]).expanduser())
    dirs.append(Path("~/.cache/directme").expanduser())
    dirs.append(Path(os.environ.get("TORCH_HOME", "~/.cache/torch")).expanduser() / "hub" / "checkpoints")
    return dirs


def _hf_cached(repo: str, filename: str) -> Optional[Path]:
    """Path of ``filename`` of ``repo`` in the local Hugging Face cache (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    got = try_to_load_from_cache(repo, filename)
    return Path(got) if isinstance(got, str) and Path(got).exists() else None


def hf_snapshot_dir(repo: str) -> Optional[Path]:
    """Local snapshot folder of a Hugging Face repo, or None (never downloads)."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        return None
    try:
        return Path(snapshot_download(repo, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None


def find_weights(spec: WeightSpec, path: Optional[PathLike] = None, what: str = "model") -> Path:
    """The checkpoint file for ``spec``; MissingWeightsError naming the file and how to fetch it."""
    tried: list[str] = []
    if path is not None:
        p = Path(path).expanduser()
        if p.is_file():
            return p
        if p.is_dir() and (p / spec.filename).is_file():
            return p / spec.filename
        tried.append(str(p))
    for d in search_dirs():
        if (d / spec.filename).is_file():
            return d / spec.filename
        tried.append(str(d))
    if spec.hf_repo:
        hit = _hf_cached(spec.hf_repo, spec.filename)
        if hit is not None:
            return hit
        tried.append(f"Hugging Face cache ({spec.hf_repo})")
    raise MissingWeightsError(
        f"{what}: weights file '{spec.filename}' not found (looked in: {'; '.join(tried)}). "
        f"Fetch it on a machine with network ({spec.fetch_hint()}) and pass its path in the backend "
        f"config ('weights': '/path/to/{spec.filename}') or put it in $DIRECTME_WEIGHTS_DIR; "
        f"use 'weights': 'random' to run the architecture with random weights.")


def find_hf_model_dir(repo: str, path: Optional[PathLike] = None, what: str = "model",
                      required: str = "config.json") -> Path:
    """A Hugging Face style model folder (config + weights) from ``path`` or the local cache."""
    if path is not None:
        p = Path(path).expanduser()
        if (p / required).is_file():
            return p
    local = Path(os.environ.get("DIRECTME_WEIGHTS_DIR", "~/.cache/directme")).expanduser() / repo.split("/")[-1]
    for cand in (local, hf_snapshot_dir(repo)):
        if cand is not None and (cand / required).is_file():
            return cand
    raise MissingWeightsError(
        f"{what}: model folder for '{repo}' not found ({'given path ' + str(path) + ', ' if path else ''}"
        f"{local}, Hugging Face cache). Fetch it on a machine with network ({hf_download(repo)}) "
        f"and pass the folder as 'weights' in the backend config, or use 'weights': 'random'.")


def describe(spec_or_repo: Union[WeightSpec, str], path: Optional[PathLike] = None) -> str:
    """Where real weights were found, or 'not found (fetch: ...)' - for `directme doctor`."""
    try:
        if isinstance(spec_or_repo, WeightSpec):
            return str(find_weights(spec_or_repo, path))
        return str(find_hf_model_dir(spec_or_repo, path))
    except MissingWeightsError:
        hint = spec_or_repo.fetch_hint() if isinstance(spec_or_repo, WeightSpec) else hf_download(spec_or_repo)
        return f"not found (fetch: {hint})"


def load_state_checked(model, checkpoint: PathLike, what: str,
                       max_missing_fraction: float = 0.5) -> tuple[list[str], list[str]]:
    """Load a ``.safetensors`` / torch checkpoint into ``model`` and say what did not match.

    Missing and unexpected parameter names are logged (a warning naming each, up to 20, and the count);
    BackendError when a shape differs or more than ``max_missing_fraction`` of the model's tensors are
    missing: the checkpoint is of another architecture. Returns (missing, unexpected)."""
    import logging

    import torch

    from ..errors import BackendError

    path = Path(checkpoint)
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        state = load_file(str(path))
    else:
        state = torch.load(str(path), map_location="cpu", weights_only=True)
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:
        raise BackendError(f"{what}: checkpoint {path} does not fit the architecture ({str(exc)[:400]})") from exc
    n_model = len(model.state_dict())
    if n_model and len(missing) > max_missing_fraction * n_model:
        raise BackendError(f"{what}: checkpoint {path} lacks {len(missing)} of the model's {n_model} tensors "
                           f"(e.g. {', '.join(list(missing)[:5])}): another architecture; check the preset")
    for kind, names in (("missing from", missing), ("unexpected in", unexpected)):
        if names:
            shown = ", ".join(list(names)[:20]) + (f", ... ({len(names)} in all)" if len(names) > 20 else "")
            logging.getLogger(__name__).warning("%s: %d tensors %s checkpoint %s: %s", what, len(names), kind,
                                                path.name, shown)
    return list(missing), list(unexpected)
