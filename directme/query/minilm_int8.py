"""all-MiniLM-L6-v2 for one short sentence at a time on CPU, in int8: the question encoder of the kind
classifier (query/classify.py), where a parse must stay within a few milliseconds.

A forward of the fp32 BERT is bound by reading its ~40 MB of encoder weights (8-12 ms for a 10-word
question on a 2-core CPU, most of it in 37 small matrix products), plus ~1-2 ms of Python in the
transformers modules. Here the same weights run as a plain loop over the 6 layers: query, key and value
fused into one product, every Linear quantised to int8 (per-output-channel weights, activations quantised
per call: ``torch.ao`` dynamic quantisation), no attention mask (one sentence, no padding) and no pooler.
Mean pooling and unit norm as sentence-transformers does. Cosine to the fp32 vectors: 0.97-0.99.
Only vectors of this encoder are compared with each other (the prototypes are embedded with it too)."""
from __future__ import annotations

import threading
from contextlib import contextmanager

import warnings
from typing import Sequence

import numpy as np

MAX_QUESTION_TOKENS = 48  # a question is cut after this many word pieces (all-MiniLM was trained on 128)


class Int8MiniLM:
    """Built from the sentence-transformers model (``st``: its tokenizer and BertModel's weights); the
    token embeddings are shared with it, not copied."""

    kind = "torch"  # the value of config query.question_encoder that picks it

    def __init__(self, st, max_tokens: int = MAX_QUESTION_TOKENS) -> None:
        import torch
        from torch import nn
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        bert = st[0].auto_model
        cfg = bert.config
        self.tokenizer = st.tokenizer
        self.max_tokens = max_tokens
        self.heads = cfg.num_attention_heads
        self.eps = cfg.layer_norm_eps
        emb = bert.embeddings
        self.word = emb.word_embeddings.weight.detach()
        self.position = emb.position_embeddings.weight.detach()
        self.token_type = emb.token_type_embeddings.weight.detach()[0]
        self.emb_norm = _params(emb.LayerNorm)
        layers = nn.ModuleList()
        self.norms = []
        for layer in bert.encoder.layer:
            att = layer.attention.self
            qkv = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
            with torch.no_grad():
                qkv.weight.copy_(torch.cat([att.query.weight, att.key.weight, att.value.weight]))
                qkv.bias.copy_(torch.cat([att.query.bias, att.key.bias, att.value.bias]))
            layers.append(nn.ModuleList([qkv, layer.attention.output.dense, layer.intermediate.dense,
                                         layer.output.dense]))
            self.norms.append((_params(layer.attention.output.LayerNorm), _params(layer.output.LayerNorm)))
        with warnings.catch_warnings():  # torch.ao's eager quantisation is marked deprecated; it is what runs here
            warnings.simplefilter("ignore")  # (not inplace: bert's own Linear layers stay fp32 for retrieval)
            self.layers = quantize_dynamic(layers.eval(), {nn.Linear: per_channel_dynamic_qconfig})
        self.dim = cfg.hidden_size
        self._warm_up()

    def _warm_up(self) -> None:
        """The int8 kernels prepare themselves per sequence length: once for every length here, not on a question."""
        import torch

        with torch.inference_mode():
            for n in range(2, self.max_tokens + 1):
                self._forward(torch.full((1, n), self.tokenizer.unk_token_id or 100, dtype=torch.long))

    def _forward(self, ids, mask=None):
        """Unit-norm mean-pooled vectors of ``ids`` (batch, n); ``mask`` (batch, n) marks real tokens (None: all)."""
        import torch
        import torch.nn.functional as F

        b, n, d, h = ids.shape[0], ids.shape[1], self.dim, self.heads
        x = F.layer_norm(self.word[ids] + self.position[:n] + self.token_type, (d,), *self.emb_norm, eps=self.eps)
        keys = None if mask is None else mask[:, None, None, :].bool()  # padding is never attended to
        for (qkv, out, up, down), (norm1, norm2) in zip(self.layers, self.norms):
            q, k, v = qkv(x).view(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)  # each (batch, heads, n, head_dim)
            att = F.scaled_dot_product_attention(q, k, v, attn_mask=keys).transpose(1, 2).reshape(b, n, d)
            x = F.layer_norm(out(att) + x, (d,), *norm1, eps=self.eps)
            x = F.layer_norm(down(F.gelu(up(x))) + x, (d,), *norm2, eps=self.eps)
        w = torch.ones(b, n, 1) if mask is None else mask[..., None].to(x.dtype)
        vec = (x * w).sum(1) / w.sum(1)
        return vec / torch.linalg.vector_norm(vec, dim=1, keepdim=True).clamp(min=1e-9)

    def encode(self, texts: Sequence[str], batch: int = 16) -> np.ndarray:
        """Unit-norm sentence vectors: one forward for a single text (a question), padded batches for many
        (the prototypes: a few forwards instead of hundreds when the classifier is prepared)."""
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            if len(texts) == 1:
                ids = self.tokenizer(texts[0], truncation=True, max_length=self.max_tokens)["input_ids"]
                with _one_thread(torch):  # a ~20-token forward: splitting it across busy cores only adds waits
                    out[0] = self._forward(torch.tensor([ids], dtype=torch.long))[0].numpy()
                return out
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths: little padding
            for i in range(0, len(order), batch):
                rows = order[i:i + batch]
                enc = self.tokenizer([texts[r] for r in rows], truncation=True, max_length=self.max_tokens,
                                     padding=True, return_tensors="pt")
                out[rows] = self._forward(enc["input_ids"], enc["attention_mask"]).numpy()
        return out


_THREADS_LOCK = threading.Lock()


@contextmanager
def _one_thread(torch):
    """torch's intra-op thread count set to 1 for one short forward, then restored. The setting is
    process-wide: torch work in other threads runs single-threaded for those few milliseconds."""
    with _THREADS_LOCK:
        before = torch.get_num_threads()
        if before > 1:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if before > 1:
                torch.set_num_threads(before)


def _params(norm) -> tuple:
    return norm.weight.detach(), norm.bias.detach()
