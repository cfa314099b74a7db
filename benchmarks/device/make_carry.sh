#!/usr/bin/env bash
# Build .gpu/ (ignored by git): what a bare GPU machine with its own torch/transformers lacks to run
# benchmarks/perception_speed.py. Pure-Python packages are copied from this checkout's .venv; DA3's
# export-only imports (moviepy with its 165 MB ffmpeg, pycolmap 121 MB) get empty placeholders,
# since directme never calls DA3's export. Then: device run `bash benchmarks/device/perception_gpu.sh`
# with carry [".gpu"].
set -euo pipefail
cd "$(dirname "$0")/../.."
SP=$(.venv/bin/python -c 'import site; print(site.getsitepackages()[0])')
grep -qx "/.gpu/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/.gpu/" >> .git/info/exclude; }
rm -rf .gpu && mkdir -p .gpu/site .gpu/shims/moviepy .gpu/shims/pycolmap
for m in depth_anything_3 groundingdino sam2 hydra omegaconf antlr4 iopath addict yapf yapf_third_party \
         supervision evo trimesh plyfile.py ultralytics thop ultralytics_platform platformdirs; do
  cp -r "$SP/$m" .gpu/site/
done
find .gpu -name __pycache__ -prune -exec rm -rf {} +
echo '"""Placeholder: DA3 imports moviepy.editor at load for an export directme never calls."""' > .gpu/shims/moviepy/__init__.py
cp .gpu/shims/moviepy/__init__.py .gpu/shims/moviepy/editor.py
echo '"""Placeholder: DA3 imports pycolmap at load for an export directme never calls."""' > .gpu/shims/pycolmap/__init__.py
du -sh .gpu
