#!/usr/bin/env bash
# GPU timings of the perception backends with random weights (run on the device machine, carry .gpu).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.gpu/shims:$PWD/.gpu/site:$PWD
B="python3 benchmarks/perception_speed.py --device cuda"
{
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch,transformers,sys;print('python',sys.version.split()[0],'torch',torch.__version__,'transformers',transformers.__version__,torch.cuda.get_device_name())"
echo "== default pipeline: da3-large + grounding_dino tiny (800 px, Objects365) + sam2 tiny (1024 px), 640x480 frames"
for n in 10 20; do
  timeout 240 $B --only da3,grounding_dino,sam2 --da3-preset da3-large --frames $n --size 480 2>&1 | grep -v "WARN\|INFO"
done
echo "== other backends"
timeout 60 $B --only da3 --da3-preset da3-small --frames 10 --size 480 2>&1 | grep -v "WARN\|INFO"
timeout 60 $B --only clip --frames 10 --size 480 2>&1 | grep -v "WARN\|INFO"
timeout 60 $B --only yolo_world --frames 10 --size 480 2>&1 | grep -v "WARN\|INFO" | tail -3
} 2>&1 | tee "${OUT:-.}/gpu_perception.txt"
