"""all-MiniLM-L6-v2 in int8 through ONNX Runtime: the question encoder of the kind classifier
(query/classify.py) when ``onnxruntime`` and ``onnx`` are installed; query/embed.py falls back to the torch
int8 copy (query/minilm_int8.py) otherwise, with the reason logged.

Why a second int8 copy: a parse that needs the sentence model must stay within a few milliseconds, and
ONNX Runtime's int8 kernels run this 6-layer encoder on one short sentence in about half the time of torch's
dynamic quantisation, with vectors closer to the fp32 model's (docs/performance.md has the figures).

Built once from the packaged fp32 weights, never downloaded: a copy of the BertModel is exported to ONNX with
mean pooling over the real tokens and unit norm inside the graph, then quantised by onnxruntime's dynamic
quantiser (int8 weights per output channel, activations quantised per call). The file is kept in the cache
directory (``$DIRECTME_CACHE_DIR``, else ``~/.cache/directme``) under a name made of the sha256 of the
weights and the versions of torch, onnx and onnxruntime, written beside its final name and renamed into
place; a later process loads it. A file that does not load is rebuilt. Only vectors of this encoder are
compared with each other (the kind prototypes are embedded with it too)."""
from __future__ import annotations

import copy
import hashlib
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from .minilm_int8 import MAX_QUESTION_TOKENS

log = logging.getLogger(__name__)
FORMAT = 1  # bump when the exported graph changes: older cache files are then not used


def cache_dir() -> Path:
    """Where built encoder files are kept: ``$DIRECTME_CACHE_DIR``, else ``~/.cache/directme``."""
    return Path(os.environ.get("DIRECTME_CACHE_DIR", "~/.cache/directme")).expanduser()


class OnnxMiniLM:
    """Built from the sentence-transformers model ``st`` (its tokenizer and BertModel's weights, which are
    copied for the export and left as they were). ``directory``: the cache directory (None: :func:`cache_dir`)."""

    kind = "onnx"  # the value of config query.question_encoder that picks it

    def __init__(self, st, directory: Optional[Path] = None, max_tokens: int = MAX_QUESTION_TOKENS) -> None:
        import onnxruntime as ort

        self.tokenizer = st.tokenizer
        self.max_tokens = max_tokens
        bert = st[0].auto_model
        self.dim = bert.config.hidden_size
        self.path = Path(directory if directory is not None else cache_dir()) / f"minilm-int8-{_key(bert)}.onnx"
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # a ~20-token forward: splitting it across busy cores only adds waits
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.built = False  # True when this object built the file (not loaded from the cache)
        try:
            self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - missing or unreadable file: build it (again)
            if self.path.exists():
                log.warning("cached question encoder %s does not load (%s); rebuilding it", self.path, exc)
            _build(bert, self.path)
            self.built = True
            self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm sentence vectors, one run per text: no padding, so a prototype gets the vector it would
        get as a question (activations are quantised per run; padded rows would shift them)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = self.tokenizer(text, truncation=True, max_length=self.max_tokens)["input_ids"]
            ids = np.asarray([ids], dtype=np.int64)
            out[row] = self.session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
        return out


def _key(bert) -> str:
    """sha256 of the weights and the versions that shape the built file (16 hex digits)."""
    import onnx
    import onnxruntime
    import torch

    h = hashlib.sha256(f"{FORMAT} {torch.__version__} {onnx.__version__} {onnxruntime.__version__}".encode())
    for name, tensor in sorted(bert.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def _build(bert, path: Path) -> None:
    """Export a copy of ``bert`` with pooling, quantise it to int8, and rename the result to ``path``."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class Pooled(torch.nn.Module):
        def __init__(self, model) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            h = self.model(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=torch.zeros_like(input_ids)).last_hidden_state
            w = attention_mask.unsqueeze(-1).to(h.dtype)
            v = (h * w).sum(1) / w.sum(1).clamp(min=1e-9)
            return v / torch.linalg.vector_norm(v, dim=1, keepdim=True).clamp(min=1e-9)

    path.parent.mkdir(parents=True, exist_ok=True)
    model = Pooled(copy.deepcopy(bert).eval())  # the export changes the module's mode: never the shared model
    ids = torch.ones((1, 8), dtype=torch.long)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".minilm-build-") as tmp:
        fp32, int8 = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the exporter's notes on tracing a transformer
            torch.onnx.export(model, (ids, torch.ones_like(ids)), str(fp32), input_names=["input_ids", "attention_mask"],
                              output_names=["vector"], opset_version=17, dynamo=False,
                              training=torch.onnx.TrainingMode.EVAL,
                              dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                            "attention_mask": {0: "batch", 1: "tokens"}, "vector": {0: "batch"}})
        level = logging.root.manager.disable
        logging.disable(logging.WARNING)  # the quantiser's advice to pre-process the graph, on the root logger
        try:
            quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.disable(level)
        os.replace(int8, path)
    log.info("built the int8 question encoder %s", path)
