"""groundingdino-py 0.4.0 on transformers 5.x: give its BERT the mask helpers it expects.

The package wraps a `BertModel` in `BertModelWarper`, which copies three methods that
transformers 4.x had on every model and 5.x removed: `get_extended_attention_mask`,
`invert_attention_mask` and `get_head_mask`. Building the model then fails with
"AttributeError: 'BertModel' object has no attribute 'get_extended_attention_mask'".
`compat_bert_model(config)` returns a `BertModel` with those three methods (transformers
4.x semantics: a 0/1 mask of shape (B, L) or (B, L, L) becomes an additive float mask
(B, 1, [1 or L], L); no head mask). Where the methods exist it is a plain `BertModel`.

Used only by the `grounding_dino_ida` detector, for the models it builds; nothing is
patched globally.
"""
from __future__ import annotations

from typing import Any, Optional

_CLASS: dict[str, Any] = {}


def _additive_mask(mask: Any, dtype: Any) -> Any:
    import torch

    if mask.dim() == 3:  # (B, L, L): one attention pattern per query token (sub-sentence masks)
        ext = mask[:, None, :, :]
    elif mask.dim() == 2:  # (B, L): padding
        ext = mask[:, None, None, :]
    else:
        raise ValueError(f"attention mask must have 2 or 3 dimensions, got shape {tuple(mask.shape)}")
    return (1.0 - ext.to(dtype)) * torch.finfo(dtype).min


def _compat_class(bert_model_cls: type) -> type:
    if "cls" not in _CLASS:
        class BertModelWithMaskHelpers(bert_model_cls):  # type: ignore[misc, valid-type]
            """BertModel plus the transformers 4.x mask helpers that groundingdino's BertModelWarper uses."""

            def get_extended_attention_mask(self, attention_mask: Any, input_shape: Any = None,
                                            device: Any = None, dtype: Optional[Any] = None) -> Any:
                return _additive_mask(attention_mask, dtype or self.dtype)

            def invert_attention_mask(self, encoder_attention_mask: Any) -> Any:
                return _additive_mask(encoder_attention_mask, self.dtype)

            def get_head_mask(self, head_mask: Any, num_hidden_layers: int, *args: Any) -> Any:
                if head_mask is not None:
                    raise NotImplementedError("head masks are not supported by this transformers version")
                return [None] * num_hidden_layers

        _CLASS["cls"] = BertModelWithMaskHelpers
    return _CLASS["cls"]


def needs_patch(bert_model_cls: type) -> bool:
    """True where this transformers' BertModel lacks the helpers (transformers >= 5)."""
    return not all(hasattr(bert_model_cls, m) for m in
                   ("get_extended_attention_mask", "invert_attention_mask", "get_head_mask"))


def compat_bert_model(config: Any) -> Any:
    """A randomly initialised BertModel (with pooler) for ``config`` that groundingdino can wrap."""
    from transformers import BertModel

    cls = _compat_class(BertModel) if needs_patch(BertModel) else BertModel
    return cls(config, add_pooling_layer=True)


__all__ = ["compat_bert_model", "needs_patch"]
