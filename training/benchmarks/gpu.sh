#!/usr/bin/env bash
# One short GPU check: install steel-envs from wheels and print the throughput table on cuda:0
# (graph-captured steps; the target is >= 1M AntRun env-steps/s at 4096+ worlds on one H200).
# Usage, from the repository root on a machine with a CUDA GPU: bash training/benchmarks/gpu.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
python -m pip install -q -e ".[bench]"
steel-envs bench steel_envs/AntRun-v0 steel_envs/CartpoleBalance-v0 --device cuda:0 \
  --num-envs "${NUM_ENVS:-1024,4096,16384}" --steps "${STEPS:-200}" --no-peers --out bench_gpu
