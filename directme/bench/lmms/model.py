"""``lmms-eval --model directme``: the Agent as an lmms-eval model (generate_until).

Each request's document names a video (the task's ``doc_to_visual``); the requests are answered video by
video, each video streamed once into its Agent (videos.py), each prompt read into question, options and
answer type (prompt.py), and the Agent's answer returned as the benchmark scores it: a letter for multiple
choice, a bare number for numeric questions. What the Agent abstains on (after the MLLM of a policy config,
when the config has one) comes back empty, scored as wrong, with the reason logged.

``--model_args`` (all optional):
    config=FILE|PRESET   agent config (perception backend, weights, answerer policy); default: the defaults
    perception=oracle    simulator episodes only: oracle perception (or truth-fed); noise=PRESET, seed=N
    fps=1.0              stream rate of real videos
    ask_at=end           end of video, or the name of a document field holding the question time in seconds
    cache_dir=DIR        saved memories (default ~/.cache/directme/lmms; "none": RAM only)
    lock_wait_s=3600     how long a rank waits for another rank streaming the same video into the cache
Data parallel as lmms-eval's own models: under ``accelerate launch --num_processes N`` each process is one
rank with its own Agent; lmms-eval gives each rank its share of the documents.
"""
from __future__ import annotations

from typing import Any, Optional

from ..._compat.torchvision_cpu import import_torch_stack
from ...config import AgentConfig
from ...errors import InvalidInputError
from .prompt import benchmark_answer, read_prompt
from .videos import AgentFactory, VideoMemories

# lmms-eval imports torchvision: on CPU torch the registry's CUDA torchvision needs directme's fix first
lmms = import_torch_stack("lmms_eval.api.model", extra="lmms", package="lmms-eval").lmms
Instance = import_torch_stack("lmms_eval.api.instance", extra="lmms", package="lmms-eval").Instance
from loguru import logger as eval_logger  # noqa: E402  (lmms-eval's logger; installed with it)
from tqdm import tqdm  # noqa: E402

DEFAULT_CACHE_DIR = "~/.cache/directme/lmms"


class DirectmeLMM(lmms):
    """The directme Agent behind lmms-eval's model interface (see the module docstring)."""

    is_simple = True

    def __init__(self, config: str = "", perception: str = "", noise: str = "none", seed: int = 0,
                 fps: float = 1.0, ask_at: str = "end", cache_dir: str = DEFAULT_CACHE_DIR,
                 lock_wait_s: float = 3600.0, batch_size: Any = 1, **kwargs: Any) -> None:
        super().__init__()
        unknown = sorted(k for k in kwargs if k not in ("device", "max_batch_size"))  # lmms-eval passes these
        if unknown:
            raise InvalidInputError(f"unknown --model_args for directme: {unknown}; known: config, perception, noise, "
                                    "seed, fps, ask_at, cache_dir, lock_wait_s")
        from accelerate import Accelerator

        accelerator = Accelerator()
        self.accelerator = accelerator
        self._device = accelerator.device
        if accelerator.num_processes > 1:
            self._rank, self._world_size = accelerator.process_index, accelerator.num_processes
        agent_config = AgentConfig.from_file(config) if config else AgentConfig()
        factory = AgentFactory(agent_config, perception=str(perception or ""), noise=str(noise), seed=int(seed),
                               fps=float(fps))
        cache = None if str(cache_dir).lower() in ("", "none", "off") else cache_dir
        self.memories = VideoMemories(factory, cache, lock_wait_s=float(lock_wait_s))
        self.ask_at = str(ask_at)
        self.empty_answers = 0  # answers returned empty (abstentions, no option, no number)

    @property
    def device(self) -> Any:
        return self._device

    def _video(self, request: Instance) -> tuple[str, Any]:
        _, _, doc_to_visual, doc_id, task, split = request.args
        doc = self.task_dict[task][split][doc_id]
        visuals = [v for v in (doc_to_visual(doc) or []) if v is not None]
        if len(visuals) != 1 or not isinstance(visuals[0], str):
            raise InvalidInputError(f"directme answers about one video per document; {task} doc {doc_id} gives "
                                    f"{len(visuals)} visual(s) of types {sorted({type(v).__name__ for v in visuals})}")
        return visuals[0], doc

    def _ask_t(self, doc: Any) -> Optional[float]:
        if self.ask_at == "end":
            return None
        if self.ask_at not in doc:
            raise InvalidInputError(f"ask_at={self.ask_at}: the document has no such field (fields: {sorted(doc)})")
        return float(doc[self.ask_at])

    def generate_until(self, requests: list[Instance]) -> list[str]:
        located = [(self._video(r), i) for i, r in enumerate(requests)]
        order = sorted(range(len(requests)), key=lambda i: located[i][0][0])  # group questions by video
        out: list[str] = [""] * len(requests)
        for i in tqdm(order, disable=self.rank != 0, desc="directme answering"):
            (video, doc), context = located[i][0], requests[i].args[0]
            prompt = read_prompt(context)
            agent = self.memories.agent(video)
            answer = agent.ask(prompt.question, t=self._ask_t(doc), options=list(prompt.options) or None)
            text, why = benchmark_answer(answer, prompt)
            if why:
                self.empty_answers += 1
                eval_logger.info(f"directme: empty answer to {prompt.question!r} on {video}: {why}")
            out[i] = text
            self.cache_hook.add_partial("generate_until", (context, requests[i].args[1]), text)
        eval_logger.info(f"directme rank {self.rank}: {len(requests)} questions; streamed "
                         f"{len(self.memories.videos_streamed)} videos ({self.memories.frames_streamed} frames) so far")
        if self.empty_answers:
            eval_logger.warning(f"directme: {self.empty_answers} empty answers so far (scored as wrong; reasons "
                                "at INFO level)")
        return out

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        raise NotImplementedError("directme answers questions (generate_until); it has no likelihood of a given "
                                  "continuation. Run a generate_until task (vsibench and directme_sim_vsibench are).")

    def generate_until_multi_round(self, requests: list[Instance]) -> list[str]:
        raise NotImplementedError("directme answers single questions about a video; multi-round chat tasks are "
                                  "not supported")
