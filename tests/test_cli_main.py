"""The `directme` entry point: --version, -v, and the logging it sets up (third-party INFO quiet by default)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

import directme
from directme.cli import configure_logging, main

QUIET_ENV = ("DA3_LOG_LEVEL", "TRANSFORMERS_VERBOSITY", "HF_HUB_DISABLE_PROGRESS_BARS", "YOLO_VERBOSE")


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"directme {directme.__version__}"


@pytest.fixture
def clean_logging(monkeypatch):
    for var in QUIET_ENV:
        monkeypatch.delenv(var, raising=False)
    root, loading = logging.getLogger(), logging.getLogger("directme.loading")
    before = (root.level, loading.level, loading.propagate)
    yield
    root.setLevel(before[0])  # setLevel, not an attribute: it also clears the loggers' level caches
    loading.setLevel(before[1])
    loading.propagate = before[2]


def test_quiet_by_default_verbose_on_request(clean_logging) -> None:
    configure_logging(verbose=False)
    assert os.environ["DA3_LOG_LEVEL"] == "ERROR" and os.environ["TRANSFORMERS_VERBOSITY"] == "error"
    assert logging.getLogger().level == logging.WARNING
    assert logging.getLogger("directme.loading").isEnabledFor(logging.INFO)  # the stage lines still show
    for var in QUIET_ENV:
        os.environ.pop(var)
    configure_logging(verbose=True)
    assert logging.getLogger().level == logging.INFO and not set(QUIET_ENV) & set(os.environ)


def test_verbose_flag_after_the_subcommand(capsys, clean_logging) -> None:
    assert main(["doctor", "--only", "given", "--imports-only", "-v"]) == 0
    assert logging.getLogger().level == logging.INFO


def test_da3_info_and_gsplat_warning_are_silenced(tmp_path) -> None:
    """DA3 prints "[INFO ] using MLP layer..." and a gsplat "[WARN ]" while building; not through the CLI."""
    pytest.importorskip("depth_anything_3")
    code = ("import sys; from directme.cli import configure_logging; configure_logging('-v' in sys.argv)\n"
            "from directme.perception.da3 import import_da3\n"
            "import_da3().DepthAnything3(model_name='da3-small')\n")
    env = {k: v for k, v in os.environ.items() if k not in QUIET_ENV}
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=240)
    loud = subprocess.run([sys.executable, "-c", code, "-v"], capture_output=True, text=True, env=env, timeout=240)
    assert quiet.returncode == 0 and loud.returncode == 0, quiet.stderr + loud.stderr
    assert "[INFO" not in quiet.stdout + quiet.stderr and "gsplat" not in quiet.stdout + quiet.stderr
    assert "[INFO" in loud.stdout + loud.stderr
