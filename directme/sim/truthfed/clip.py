"""Truth-fed stand-in for CLIP in the scene tagger (``perception.scene_tag.ClipSceneTagger``).

Only the CLIP model's two feature functions are replaced; the tagger's prompts, tokenization,
image preprocessing, normalisation, softmax over ``100 * cos`` and ``min_score`` run unchanged.
``get_text_features`` becomes a deterministic text encoder (a seeded random vector per token
sequence, ``projection_dim`` wide). ``get_image_features`` returns, for the frame being tagged,
the text feature of its ground-truth room prompt plus seeded noise, so the logits over the
place prompts favour the true room by a margin the noise narrows. Both return what transformers'
``CLIPModel`` returns: a ``BaseModelOutputWithPooling`` whose ``pooler_output`` holds the projected
(not normalised) features.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from ...errors import InvalidInputError
from .source import TruthSource


def install(tagger: Any, truth: TruthSource, noise: float = 0.3, seed: int = 0) -> None:
    """Make ``tagger`` (a ClipSceneTagger) see ``truth``'s rooms.

    ``noise``: norm of the Gaussian noise added to the unit image feature (0 = the true room's text
    feature exactly; larger values narrow the logit margin and can flip tags); ``seed``: the noise
    seed, combined with the frame index so each frame's noise is fixed."""
    missing = [r for r in truth.room_types if r not in tagger.places]
    if missing:
        raise InvalidInputError(f"truth-fed CLIP: the scene tagger's places lack the episode's room types "
                                f"{missing}; add them to its 'places'")
    if noise < 0:
        raise InvalidInputError(f"truth-fed CLIP: noise must be >= 0, got {noise}")
    torch = tagger.torch
    from transformers.modeling_outputs import BaseModelOutputWithPooling

    model, dim = tagger.model, int(tagger.model.config.projection_dim)
    side = int(tagger.image_size)

    def get_text_features(input_ids=None, attention_mask=None, **_: Any) -> Any:
        ids = input_ids.cpu().numpy()
        mask = np.ones_like(ids) if attention_mask is None else attention_mask.cpu().numpy()
        rows = [np.random.default_rng(zlib.crc32(row[m > 0].astype(np.int64).tobytes())).normal(size=dim)
                for row, m in zip(ids, mask)]
        return BaseModelOutputWithPooling(pooler_output=torch.as_tensor(np.stack(rows), dtype=torch.float32,
                                                                        device=input_ids.device))

    def get_image_features(pixel_values=None, **_: Any) -> Any:
        if pixel_values is None or tuple(pixel_values.shape[1:]) != (3, side, side):
            raise InvalidInputError(f"truth-fed CLIP: expected pixel_values (B, 3, {side}, {side}), got "
                                    f"{None if pixel_values is None else tuple(pixel_values.shape)}")
        index = truth.current_index
        if index is None:
            raise InvalidInputError("truth-fed CLIP: no frame registered; call truth.register(frame) first")
        text = tagger.place_features[tagger.places.index(truth.room(index))].cpu().numpy()
        rng = np.random.default_rng((seed, index))
        feat = text + rng.normal(size=dim) * noise / np.sqrt(dim)
        feats = np.repeat(feat[None], pixel_values.shape[0], axis=0)
        return BaseModelOutputWithPooling(pooler_output=torch.as_tensor(feats, dtype=torch.float32,
                                                                        device=pixel_values.device))

    model.get_text_features = get_text_features
    model.get_image_features = get_image_features
    tagger.embed_places()  # the place prompts through the tagger's own tokenization and the stand-in
