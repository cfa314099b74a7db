"""Agent API: streaming observe/ask with the "given" perception on a ray-cast box scene,
time checks, empty memory, persistence, reset and configuration files."""
import json

import numpy as np
import pytest

from directme import Agent, AgentConfig
from directme.errors import InvalidInputError
from directme.geometry import EgoFrame, azimuth_deg, direction_word
from directme.geometry import Intrinsics
from directme.memory.testing import Box, look_at, perceive

BOXES = [Box(1, "Chair", (2.5, 0.0, 0.45), (0.5, 0.5, 0.9)), Box(2, "Couch", (-2.0, 2.0, 0.4), (0.9, 0.9, 0.8)),
         Box(3, "Cup", (0.3, -2.5, 0.1), (0.3, 0.3, 0.3))]
DIRS = ["It is in front of you.", "It is to your front-left.", "It is on your left.", "It is to your rear-left.",
        "It is behind you.", "It is to your rear-right.", "It is on your right.", "It is to your front-right."]
LETTERS = "ABCDEFGH"


def frames(n=14, t0=5.0):
    """A wearer standing at the origin turning left 30 deg per second; frames carry depth, pose and
    intrinsics, with instances and the scene tag in meta (the "given" perception backend)."""
    from directme.types import Frame

    K = Intrinsics.from_fov(128, 96, 80.0)
    for k in range(n):
        a = np.deg2rad(30.0 * k)
        fp = perceive(BOXES, look_at((0, 0, 1.6), (np.cos(a), np.sin(a), 1.3)), K, t0 + k, k, "living room")
        f = fp.frame
        yield Frame(f.t_s, f.rgb, f.depth_m, f.T_world_cam, f.intrinsics, f.index, "boxes",
                    {"instances": fp.instances, "scene_tag": "living room"})


@pytest.fixture(scope="module")
def stream():
    return list(frames())


def fed(stream, upto=None):
    agent = Agent(AgentConfig.from_dict({"query": {"embedder": "string"}}))
    agent.observe_many(f for f in stream if upto is None or f.t_s <= upto)
    return agent


def expected_direction(frame, centre):
    ego = EgoFrame.from_camera(frame.T_world_cam, np.array([0.0, 0.0, 1.0]))
    return direction_word(azimuth_deg(ego.to_ego(np.asarray(centre))))


def test_same_question_at_two_times_answers_from_memory_at_each_time(stream):
    agent = fed(stream)
    q = "Which side is the couch on right now?"
    answers = {}
    for f in (stream[7], stream[-1]):  # couch at -75 deg (right), then at 105 deg (left)
        a = agent.ask(q, t=f.t_s, options=DIRS)
        assert a.letter == LETTERS[DIRS.index(_option_for(expected_direction(f, BOXES[1].centre_w)))]
        answers[f.t_s] = a.letter
    assert len(set(answers.values())) == 2, "the wearer turned: the answer must change"
    assert agent.ask(q, options=DIRS).letter == answers[stream[-1].t_s]  # t defaults to the latest frame


def _option_for(word):
    return {"front": DIRS[0], "front-left": DIRS[1], "left": DIRS[2], "behind-left": DIRS[3], "behind": DIRS[4],
            "behind-right": DIRS[5], "right": DIRS[6], "front-right": DIRS[7]}[word]


def test_future_time_is_a_clear_error(stream):
    agent = fed(stream, upto=8)
    with pytest.raises(InvalidInputError, match="future"):
        agent.ask("Where is the cup?", t=30.0)


def test_empty_memory_and_time_before_first_frame(stream):
    empty = Agent(AgentConfig.from_dict({"query": {"embedder": "string"}}))
    a = empty.ask("Where is the cup?", options=DIRS[:4])
    assert "empty_memory" in a.flags and a.confidence == 0.0
    assert sum(a.option_scores.values()) == pytest.approx(1.0)
    b = fed(stream).ask("Where is the cup?", t=1.0, options=DIRS[:4])
    assert "before_first_frame" in b.flags and b.confidence == 0.0


def test_unseen_object_and_bad_input(stream):
    agent = fed(stream)
    a = agent.ask("Where is the giraffe?", options=DIRS)
    assert a.confidence == 0.0 and "no_evidence" in a.flags
    with pytest.raises(InvalidInputError):
        agent.ask("")
    with pytest.raises(InvalidInputError):
        agent.ask("Where is the cup?", options=[str(i) for i in range(11)])
    with pytest.raises(InvalidInputError, match="time order"):
        agent.observe(stream[0])


def test_save_load_reset_round_trip(stream, tmp_path):
    agent = fed(stream)
    q = "How many chairs are there?"
    before = agent.ask(q, options=["Zero.", "One.", "Two."])
    agent.save(tmp_path / "agent")
    loaded = Agent.load(tmp_path / "agent")
    after = loaded.ask(q, options=["Zero.", "One.", "Two."])
    assert (before.letter, after.letter) == ("B", "B") and after.option_scores == before.option_scores
    loaded.reset()
    assert "empty_memory" in loaded.ask(q, options=["Zero.", "One."]).flags


def test_config_from_file_and_errors(tmp_path):
    p = tmp_path / "agent.yaml"
    p.write_text("query:\n  reach_m: 0.7\n  embedder: string\nanswerer:\n  name: geometric\n")
    agent = Agent.from_config(p)
    assert agent.config.query.reach_m == 0.7
    j = tmp_path / "agent.json"
    j.write_text(json.dumps(agent.config.to_dict()))
    assert AgentConfig.from_file(j) == agent.config
    with pytest.raises(InvalidInputError, match="reach_mm"):
        AgentConfig.from_dict({"query": {"reach_mm": 1}})
    with pytest.raises(InvalidInputError, match="episode"):
        Agent({"perception": {"backend": "oracle"}}).observe(next(frames(1)))
