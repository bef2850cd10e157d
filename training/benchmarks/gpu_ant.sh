#!/usr/bin/env bash
# One short GPU run: install steel-envs with the training extra from wheels, check the graph-captured env,
# then train AntRun for 10 minutes on cuda:0 with 4096 worlds and print the return curve.
# Usage (from the repository root, on a machine with a CUDA GPU): bash training/benchmarks/gpu_ant.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
python -m pip install -q -e ".[train]"
steel-envs rollout steel_envs/AntRun-v0 --num-envs 4096 --steps 200 --device cuda:0 --no-progress
python -m steel_envs.training.benchmarks.learning ant --device cuda:0 --num-envs 4096 --minutes "${MINUTES:-10}" --every 30
