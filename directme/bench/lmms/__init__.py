"""directme inside lmms-eval (``pip install directme[lmms]``): the ``directme`` model (model.py), registered
through the ``lmms_eval.models`` entry point, and the offline ``directme_sim_vsibench`` task (simtask.py:
simulator episodes asked VSI-Bench's questions, scored by lmms-eval's own vsibench code).

Only model.py, task_utils.py and ``manifest`` import lmms_eval; prompt reading (prompt.py), the memory per
video (videos.py) and the questions (vsi_kinds.py) work without it. Usage: docs/benchmarks.md, In lmms-eval.
"""
from __future__ import annotations

MODEL_NAME = "directme"
MODEL_CLASS = "directme.bench.lmms.model.DirectmeLMM"


def manifest():
    """The ``lmms_eval.models`` entry point: lmms-eval's manifest of the ``directme`` model."""
    from ..._compat.torchvision_cpu import import_torch_stack

    registry = import_torch_stack("lmms_eval.models.registry_v2", extra="lmms", package="lmms-eval")
    return registry.ModelManifest(model_id=MODEL_NAME, simple_class_path=MODEL_CLASS)
