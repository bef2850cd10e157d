#!/usr/bin/env bash
# One prepared GPU check of steel-envs: a preflight, then four stages inside a fixed time budget (8 minutes on a
# GPU, preflight included), each under its own `timeout`, so one hang cannot eat the budget:
#   a. tests    the GPU-marked tests (tests/test_gpu.py) on the device
#   b. bench    `steel-envs bench`'s measurement (training/benchmarks/bench.py) of every SolverSteel ID at 4,096 and
#               16,384 worlds, no peers, 100 steps; one process, results written after each (ID, worlds) item
#   c. train    `steel-envs train steel_envs/AntRun-v0` for 3 minutes at 4,096 worlds
#   d. pixels   env-steps/s and frames/s of obs_mode="rgb" (CartpoleBalance, AntRun, 1,024 worlds, 64 x 64 px)
#   e. learn    (only with --stages ...,learn) `steel-envs train <ID>` of every ID in turn, thousands of worlds
#               (GPU_CHECK_LEARN_ENVS, 4,096; the SolverVBD IDs GPU_CHECK_LEARN_ENVS_VBD, 1,024) for
#               GPU_CHECK_LEARN_SECONDS (60) each: its env-steps/s with learning and its return curve, one
#               learn_<ID>.log / learn_<ID>_summary.json each; IDs that no longer fit in the budget are skipped.
#               `--stages learn` runs it alone (a second device call after the 8-minute check).
# A failing stage is recorded and the next one runs. Every figure is printed and written to the results folder:
# <stage>.log, a <stage>_summary.json per stage, bench.json (steel-envs bench's format), a combined summary.txt
# and summary.json, and gpu_check.log (the whole transcript).
#
# Usage, from the repository root of the GPU machine, after `source .gpukit/b/unpack.sh` (shared/gpu-kit):
#     bash training/benchmarks/gpu_check.sh <results-dir> [--device cuda:0] [--stages tests,bench,train,pixels]
# With the device tool: one run carrying .gpukit/a copies it to /tmp/gpukit; the next (within ~30 s) carries .gpukit/b
# (and .gpukit/cache/ holding a warp_cache.tar.xz from an earlier run's results, if any) and runs
#     source .gpukit/b/unpack.sh && bash training/benchmarks/gpu_check.sh /tmp/gpu
# (source unpack.sh in the shell itself, not in a pipe: its exports must reach the script).
# Dry run of the same stages with tiny sizes (16 and 64 worlds, 20 steps, 20 s of training, 4 worlds of 16 x 16
# pixels; the GPU tests skip themselves) on a CPU machine:
#     bash training/benchmarks/gpu_check.sh /tmp/gpucheck_dry --device cpu
# Exit status: 0 when every stage passed; 1 when a stage failed, timed out, was cut short or skipped; 2 when the
# preflight failed (no CUDA seen by torch or Warp, steel_envs not importable) or on bad arguments.
# Environment overrides: GPU_CHECK_BUDGET_S (default 470: 8 minutes less a kill grace; 1800 with --device cpu),
# GPU_CHECK_BENCH_WORLDS, GPU_CHECK_BENCH_STEPS, GPU_CHECK_TRAIN_SECONDS, GPU_CHECK_TRAIN_ENVS, GPU_CHECK_PIXEL_ENVS,
# GPU_CHECK_PIXEL_SIZE.
# Nothing is installed here (the GPU machine has no network).

set -uo pipefail
export PYTHONUNBUFFERED=1
# The working directory is the source tree, where `steel_envs/` lacks the envs/, tasks/ and training/ subpackages
# that pyproject.toml maps into it: Python must not put it on sys.path ahead of the installed package (-P).
export PYTHONSAFEPATH=1

usage() {
  echo "usage: bash training/benchmarks/gpu_check.sh <results-dir> [--device cuda:0|cpu] [--stages LIST]" >&2
  echo "  LIST: comma-separated of tests, bench, train, pixels, learn (default tests,bench,train,pixels)" >&2
  exit 2
}
[[ $# -ge 1 && $1 != -* ]] || usage
RESULTS=$1
shift
DEVICE=cuda:0
STAGES=tests,bench,train,pixels
while [[ $# -gt 0 ]]; do
  case $1 in
    --device) [[ $# -ge 2 ]] || usage; DEVICE=$2; shift 2 ;;
    --device=*) DEVICE=${1#*=}; shift ;;
    --stages) [[ $# -ge 2 ]] || usage; STAGES=$2; shift 2 ;;
    --stages=*) STAGES=${1#*=}; shift ;;
    *) echo "gpu_check: unknown argument $1" >&2; usage ;;
  esac
done
for stage in ${STAGES//,/ }; do
  [[ $stage =~ ^(tests|bench|train|pixels|learn)$ ]] || { echo "gpu_check: unknown stage $stage" >&2; usage; }
done
want() { [[ ",$STAGES," == *",$1,"* ]]; }
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
mkdir -p "$RESULTS/scripts" || exit 2
RESULTS=$(cd "$RESULTS" && pwd)
: >"$RESULTS/stages.tsv"
exec > >(tee -a "$RESULTS/gpu_check.log") 2>&1
TEE_PID=$!
# At exit, close the transcript pipe and let tee write its last lines before the script's status is reported.
finish() {
  exec 1>&- 2>&-
  wait "$TEE_PID" 2>/dev/null || sleep 0.5
}
trap finish EXIT

if [[ $DEVICE == cpu ]]; then
  BUDGET=${GPU_CHECK_BUDGET_S:-1800}
  BENCH_WORLDS=${GPU_CHECK_BENCH_WORLDS:-16,64}
  BENCH_STEPS=${GPU_CHECK_BENCH_STEPS:-20}
  TRAIN_SECONDS=${GPU_CHECK_TRAIN_SECONDS:-20}
  TRAIN_ENVS=${GPU_CHECK_TRAIN_ENVS:-64}
  PIXEL_ENVS=${GPU_CHECK_PIXEL_ENVS:-4}
  PIXEL_SIZE=${GPU_CHECK_PIXEL_SIZE:-16}
  PIXEL_STEPS=5
  LEARN_SECONDS=${GPU_CHECK_LEARN_SECONDS:-10}
  LEARN_ENVS=${GPU_CHECK_LEARN_ENVS:-32}
  LEARN_ENVS_VBD=${GPU_CHECK_LEARN_ENVS_VBD:-4}
else
  BUDGET=${GPU_CHECK_BUDGET_S:-470}
  BENCH_WORLDS=${GPU_CHECK_BENCH_WORLDS:-4096,16384}
  BENCH_STEPS=${GPU_CHECK_BENCH_STEPS:-100}
  TRAIN_SECONDS=${GPU_CHECK_TRAIN_SECONDS:-180}
  TRAIN_ENVS=${GPU_CHECK_TRAIN_ENVS:-4096}
  PIXEL_ENVS=${GPU_CHECK_PIXEL_ENVS:-1024}
  PIXEL_SIZE=${GPU_CHECK_PIXEL_SIZE:-64}
  PIXEL_STEPS=50
  LEARN_SECONDS=${GPU_CHECK_LEARN_SECONDS:-60}
  LEARN_ENVS=${GPU_CHECK_LEARN_ENVS:-4096}
  LEARN_ENVS_VBD=${GPU_CHECK_LEARN_ENVS_VBD:-1024}
fi
ALL_IDS="AntRun-v0 CartpoleBalance-v0 CartpoleSwingup-v0 PushCube-v0 QuadrupedVelocity-v0 HumanoidRun-v0"
ALL_IDS+=" SoftPush-v0 ClothFold-v0"
VBD_IDS=" SoftPush-v0 ClothFold-v0 "
# The bench measures AntRun (the headline) at both counts, then the other IDs at 4,096 in this order, then at 16,384
# cheapest first; items that no longer fit in the stage's time are skipped and listed.
STEEL_IDS="steel_envs/AntRun-v0,steel_envs/CartpoleBalance-v0,steel_envs/HumanoidRun-v0"
STEEL_IDS+=",steel_envs/QuadrupedVelocity-v0,steel_envs/PushCube-v0,steel_envs/CartpoleSwingup-v0"
# Seconds kept for the stages after a stage (its limit is the smaller of its cap and what is left minus these).
KEEP_SUMMARY=10
KEEP_PIXELS=$(want pixels && echo $((35 + KEEP_SUMMARY)) || echo $KEEP_SUMMARY)
KEEP_TRAIN=$(want train && echo $((TRAIN_SECONDS + 35 + KEEP_PIXELS)) || echo "$KEEP_PIXELS")
KEEP_BENCH=$(want bench && echo $((60 + KEEP_TRAIN)) || echo "$KEEP_TRAIN")
T0=$(date +%s.%N)

WARP_CACHE=${WARP_CACHE_PATH:-$HOME/.cache/warp}
cache_mb() { du -sm "$WARP_CACHE" 2>/dev/null | cut -f1 || echo 0; }
elapsed() { awk -v t0="$T0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t0 }'; }
left() { awk -v t0="$T0" -v now="$(date +%s.%N)" -v b="$BUDGET" 'BEGIN { printf "%d", b - (now - t0) }'; }

# run_stage NAME CAP KEEP COMMAND...: run COMMAND under `timeout` (SIGINT, so pytest and Python report what they
# have; SIGKILL 10 s later), its output to the transcript and RESULTS/NAME.log; record status, rc and wall time.
STAGE_RC=0
run_stage() {
  local name=$1 cap=$2 keep=$3
  shift 3
  local remaining limit start wall rc status cache0 compiled
  remaining=$(left)
  limit=$((remaining - keep < cap ? remaining - keep : cap))
  if ((limit < 10)); then
    echo "== stage $name: skipped, only $remaining s left of the $BUDGET s budget"
    printf '%s\tskipped\t-\t0.0\t%s\t0\n' "$name" "$limit" >>"$RESULTS/stages.tsv"
    STAGE_RC=125
    return
  fi
  echo
  echo "== stage $name: limit $limit s ($remaining s left of $BUDGET s, at $(elapsed) s)"
  echo "   $*"
  start=$(date +%s.%N)
  cache0=$(cache_mb)
  STAGE_LIMIT_S=$limit timeout --signal=INT --kill-after=10 "$limit" "$@" 2>&1 | tee "$RESULTS/$name.log"
  rc=${PIPESTATUS[0]}
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  compiled=$(($(cache_mb) - ${cache0:-0}))
  case $rc in
    0) status=ok ;;
    124 | 137) status=timeout ;;
    3) status=incomplete ;;
    *) status=failed ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" "$wall" "$limit" "$compiled" >>"$RESULTS/stages.tsv"
  echo "== stage $name: $status (rc $rc) in $wall s; Warp kernel cache +$compiled MB"
  STAGE_RC=$rc
}

# ------------------------------------------------------------------------------------------------ helper scripts

cat >"$RESULTS/scripts/preflight.py" <<'PY'
"""Preflight: versions, the GPU, driver and toolkit, conditional graphs; exit 2 unless torch and Warp see CUDA."""

import importlib.metadata as md
import json
import platform
import shutil
import subprocess
import sys

device, out = sys.argv[1], sys.argv[2]
info = {"device": device, "python": sys.version.split()[0], "platform": platform.platform()}
problems = []


def version(dist):
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


import torch  # noqa: E402

info["torch"] = torch.__version__
info["torch_cuda_build"] = torch.version.cuda
info["torch_cuda_available"] = torch.cuda.is_available()
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    info["gpu"] = p.name
    info["gpu_memory_gib"] = round(p.total_memory / 2**30, 1)
    info["compute_capability"] = f"{p.major}.{p.minor}"
    info["torch_gpu_count"] = torch.cuda.device_count()
import warp as wp  # noqa: E402

wp.config.log_level = wp.LOG_WARNING
wp.init()
info["warp"] = wp.__version__
info["warp_cuda_available"] = wp.is_cuda_available()
info["warp_cuda_devices"] = wp.get_cuda_device_count()
driver, toolkit = wp.get_cuda_driver_version(), wp.get_cuda_toolkit_version()
info["cuda_driver"] = ".".join(map(str, driver)) if driver else None
info["cuda_toolkit"] = ".".join(map(str, toolkit)) if toolkit else None
info["conditional_graphs"] = wp.is_conditional_graph_supported()
info["kernel_cache"] = wp.config.kernel_cache_dir
if shutil.which("nvidia-smi"):
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        info["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    except Exception as e:
        info["nvidia_smi"] = f"failed: {e}"
if device != "cpu":
    if not torch.cuda.is_available():
        problems.append(f"torch {torch.__version__} sees no CUDA device (torch.version.cuda={torch.version.cuda})")
    if not wp.is_cuda_available():
        problems.append(f"Warp {wp.__version__} sees no CUDA device (driver {info['cuda_driver']})")
    if not problems:
        try:
            d = wp.get_device(device)
            info["warp_device"] = {"name": d.name, "arch": d.arch, "sms": d.sm_count, "mempool": d.is_mempool_enabled}
            a = wp.zeros(4, dtype=wp.float32, device=d)
            wp.to_torch(a).add_(1.0)  # zero-copy: torch writes Warp's memory
            torch.cuda.synchronize()
            if a.numpy().tolist() != [1.0] * 4:
                problems.append("a torch write to a wp.to_torch view did not reach the Warp array")
        except Exception as e:
            problems.append(f"Warp device {device}: {type(e).__name__}: {e}")
try:
    import gymnasium
    import newton
    import steel_envs

    info["newton"] = newton.__version__
    info["gymnasium"] = gymnasium.__version__
    info["steel_envs_from"] = steel_envs.__file__
except Exception as e:
    problems.append(f"import steel_envs failed: {type(e).__name__}: {e}")
for dist in ("rsl-rl-lib", "tensordict", "tyro", "tensorboard", "matplotlib", "pytest"):
    info[dist] = version(dist)
try:  # stage c needs it; tensordict's compiled extension is built against one torch
    import rsl_rl.runners  # noqa: F401

    info["rsl_rl import"] = "ok"
except Exception as e:
    info["rsl_rl import"] = f"FAILED ({type(e).__name__}: {e}): stage c (train) will fail"
info["steel-envs command"] = shutil.which("steel-envs")
if info["steel-envs command"] is None:
    problems.append("the steel-envs command is not on PATH (source .gpukit/b/unpack.sh first)")
info["problems"] = problems
for k, v in info.items():
    print(f"  {k:22s} {v}")
with open(out, "w") as f:
    json.dump(info, f, indent=2, default=str)
if problems:
    print("PREFLIGHT FAILED:\n  " + "\n  ".join(problems))
    sys.exit(2)
PY

cat >"$RESULTS/scripts/tests_summary.py" <<'PY'
"""Stage a's figures from pytest's JUnit XML (or from the log when pytest was killed)."""

import json
import os
import re
import sys
import xml.etree.ElementTree as ET

xml, log, out = sys.argv[1:4]
summary = {"tests": []}
if os.path.exists(xml):
    for case in ET.parse(xml).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                summary.setdefault("messages", {})[case.get("name")] = (child.get("message") or "")[:400]
        summary["tests"].append({"name": case.get("name"), "outcome": outcome, "seconds": float(case.get("time", 0))})
    for key in ("passed", "failed", "error", "skipped"):
        summary[key] = sum(t["outcome"] == key for t in summary["tests"])
else:
    text = ""
    if os.path.exists(log):
        with open(log) as f:
            text = f.read()
    summary["note"] = "no JUnit XML (pytest killed?); counts from the log's last summary line"
    for n, key in re.findall(r"(\d+) (passed|failed|error|errors|skipped)", text):
        summary[key.rstrip("s") if key == "errors" else key] = int(n)
with open(out, "w") as f:
    json.dump(summary, f, indent=2)
counts = ", ".join(f"{summary.get(k, 0)} {k}" for k in ("passed", "failed", "error", "skipped"))
print(f"tests: {counts}")
for t in sorted((t for t in summary["tests"] if t["seconds"] >= 0.05), key=lambda t: -t["seconds"])[:8]:
    print(f"  {t['seconds']:7.1f} s  {t['outcome']:7s} {t['name']}")
PY

cat >"$RESULTS/scripts/bench.py" <<'PY'
"""Stage b: the measurement of `steel-envs bench` (training/benchmarks/bench.py: bench(), same rows, table, JSON
and plot) for each (ID, worlds) item in one process, so kernels load once and every finished item is on disk before
the next starts. Items whose estimated time exceeds what is left of STAGE_LIMIT_S are skipped (exit 3)."""

import dataclasses
import gc
import json
import os
import signal
import sys
import time
import traceback

import numpy as np
import torch
import warp as wp

wp.config.log_level = wp.LOG_WARNING
from steel_envs.training.benchmarks import bench as B  # noqa: E402

device, out, ids, counts, steps = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4], int(sys.argv[5])
counts = [int(n) for n in counts.split(",")]
budget = float(os.environ.get("STAGE_LIMIT_S", "600")) - 15.0  # time to write the files after an interrupted item
start = time.monotonic()


class ItemTimeout(Exception):
    pass


def on_alarm(*_):
    raise ItemTimeout


signal.signal(signal.SIGALRM, on_alarm)
rows, items, walls = [], [], {}
meta = {
    "device": device,
    "cpu_count": os.cpu_count(),
    "torch_threads": torch.get_num_threads(),
    "steps": steps,
    "command": f"steel-envs bench {' '.join(ids)} --device {device} --num-envs {','.join(map(str, counts))} "
    f"--steps {steps} --no-peers (one process, item by item: training/benchmarks/gpu_check.sh)",
}


def record(row):
    return {k: None if isinstance(v, float) and np.isnan(v) else v for k, v in dataclasses.asdict(row).items()}


def write():
    with open(f"{out}.json", "w") as f:
        json.dump({"meta": meta, "rows": [record(r) for r in rows], "items": items}, f, indent=2)
    lines, table = [], []
    for r in rows:
        if r.kind != "steel-envs":
            continue
        peer = {p.kind: p for p in rows if p.env_id == r.env_id and p.num_envs == r.num_envs}
        bare, fs = peer.get("bare"), peer.get("featherstone")
        entry = {
            "env_id": r.env_id,
            "worlds": r.num_envs,
            "env_steps_per_s": r.env_steps_per_s,
            "physics_steps_per_s": r.physics_steps_per_s,
            "physics_ms": r.physics_ms,
            "overhead_ms": r.overhead_ms,
            "wrapper_overhead": r.notes.get("wrapper_overhead"),
            "bare_env_steps_per_s": bare.env_steps_per_s if bare else None,
            "featherstone_env_steps_per_s": fs.env_steps_per_s if fs else None,
            "memory_per_world_kib": r.memory_per_world_kib,
            "first_call_s": r.first_call_s,
        }
        table.append(entry)
        ratio = f"{r.env_steps_per_s / fs.env_steps_per_s:8.2f}x" if fs else "       -"
        overhead = 100 * r.notes.get("wrapper_overhead", np.nan)
        featherstone = fs.env_steps_per_s if fs else np.nan
        lines.append(
            f"{r.env_id.split('/')[-1]:24s} {r.num_envs:7d} {r.env_steps_per_s:13,.0f} {r.physics_steps_per_s:14,.0f} "
            f"{r.physics_ms:10.3f} {r.overhead_ms:11.3f} {overhead:+9.1f}% {featherstone:15,.0f} "
            f"{ratio} {r.memory_per_world_kib:9.1f} {r.first_call_s:7.1f}"
        )
    head = (
        f"{'env':24s} {'worlds':>7s} {'env-steps/s':>13s} {'phys-steps/s':>14s} {'physics ms':>10s} "
        f"{'overhead ms':>11s} {'overhead':>10s} {'featherstone/s':>15s} {'vs feath':>9s} {'KiB/world':>9s} "
        f"{'first s':>7s}"
    )
    skipped = [f"{i['env_id']} x {i['worlds']}: {i['status']}" for i in items if i["status"] != "ok"]
    text = "\n".join([head, "-" * len(head), *lines, *(["not measured:", *skipped] if skipped else [])])
    with open(os.path.join(os.path.dirname(out), "bench_summary.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(os.path.dirname(out), "bench_summary.json"), "w") as f:
        json.dump({"device": device, "steps": steps, "table": table, "items": items}, f, indent=2)
    return text


def plan():
    """The first ID (the headline) at every count; then the other IDs at the first count in the given order; then
    each larger count with the IDs that were cheapest at the smaller one first, so that one slow item cannot cost
    the cheap ones their measurement when the budget runs out."""
    for n in counts:
        yield n, ids[0]
    rest = ids[1:]
    for i, n in enumerate(counts):
        order = rest if i == 0 else sorted(rest, key=lambda env_id: walls.get(env_id, float("inf")))
        for env_id in order:
            yield n, env_id


for n, env_id in plan():
    remaining = budget - (time.monotonic() - start)
    # A 4x larger count takes about 3x the wall time of the smaller one (model build and capture grow with it; the
    # first item of an ID also paid its kernel loads).
    need = 3.0 * walls[env_id] if env_id in walls else 5.0
    item = {"env_id": env_id, "worlds": n}
    if remaining < need:
        item.update(status=f"skipped: {remaining:.0f} s left, about {need:.0f} s needed", seconds=0.0)
        items.append(item)
        print(f"[bench] {env_id} x {n}: {item['status']}", flush=True)
        continue
    print(f"[bench] {env_id} x {n} ({remaining:.0f} s left)", flush=True)
    t = time.perf_counter()
    signal.alarm(max(1, int(remaining)))
    try:
        new = B.bench([env_id], [n], steps, device, peers=False, progress=lambda message: None, featherstone=False)
        status = "ok"
    except ItemTimeout:
        new, status = [], f"timeout after {time.perf_counter() - t:.0f} s (stage budget)"
    except Exception as e:
        traceback.print_exc()
        new, status = [], f"error: {type(e).__name__}: {e}"[:300]
    finally:
        signal.alarm(0)
    walls[env_id] = time.perf_counter() - t
    item.update(status=status, seconds=round(walls[env_id], 1))
    items.append(item)
    rows += new
    print(f"[bench] {env_id} x {n}: {status} in {walls[env_id]:.1f} s", flush=True)
    if new:
        print(B._table(new), flush=True)
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    write()

print("\n" + write())
try:
    B._plot(rows, f"{out}.png")
    print(f"wrote {out}.json, {out}.png, bench_summary.txt/.json")
except Exception as e:
    print(f"wrote {out}.json (no plot: {type(e).__name__}: {e})")
statuses = [i["status"] for i in items]
sys.exit(0 if all(s == "ok" for s in statuses) else 1 if any(s.startswith("error") for s in statuses) else 3)
PY

cat >"$RESULTS/scripts/train_summary.py" <<'PY'
"""Stage c's figures: the final line of `steel-envs train` and the TensorBoard scalars of its run."""

import glob
import json
import os
import re
import sys

log, log_dir, out, stage_rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = ""
if os.path.exists(log):
    with open(log) as f:
        text = f.read()
summary = {"stage_rc": stage_rc}
m = re.search(
    r"(\d+) iterations, (\d+) env-steps in ([\d.]+) s \((\d+) env-steps/s\), mean return \(last 100 episodes\) "
    r"(\S+)",
    text,
)
if m:
    summary.update(
        iterations=int(m[1]),
        env_steps=int(m[2]),
        seconds=float(m[3]),
        env_steps_per_s=int(m[4]),
        mean_return_last_100=float(m[5]) if m[5] != "nan" else None,
    )
events = sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True), key=os.path.getmtime)
if events:
    run_dir = os.path.dirname(events[-1])
    summary["run_dir"] = run_dir
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        acc = EventAccumulator(run_dir, size_guidance={"scalars": 0})
        acc.Reload()
        tags = acc.Tags()["scalars"]
        summary["last"] = {tag: acc.Scalars(tag)[-1].value for tag in tags}
        reward = next((t for t in tags if t.endswith("mean_reward")), None) or next(
            (t for t in tags if "reward" in t.lower()), None
        )
        if reward:
            points = acc.Scalars(reward)
            t0 = points[0].wall_time
            pick = sorted({round(i * (len(points) - 1) / 11) for i in range(12)})
            summary["curve_tag"] = reward
            summary["curve"] = [
                {"iteration": points[i].step, "seconds": round(points[i].wall_time - t0, 1), "value": points[i].value}
                for i in pick
            ]
    except Exception as e:
        summary["tensorboard"] = f"not read: {type(e).__name__}: {e}"
with open(out, "w") as f:
    json.dump(summary, f, indent=2)
for k in ("iterations", "env_steps", "seconds", "env_steps_per_s", "mean_return_last_100", "run_dir"):
    if k in summary:
        print(f"  {k:22s} {summary[k]}")
for p in summary.get("curve", []):
    print(f"  {summary['curve_tag']} at iteration {p['iteration']:5d} ({p['seconds']:6.1f} s): {p['value']:10.2f}")
for tag, value in sorted(summary.get("last", {}).items()):
    print(f"  last {tag:40s} {value:12.4g}")
PY

cat >"$RESULTS/scripts/pixels.py" <<'PY'
"""Stage d: env-steps/s and frames/s with obs_mode="rgb" (Newton's ray-traced SensorCamera, one camera per world),
random actions made on the device, synchronized around the timed loop; the same count with state observations."""

import gc
import json
import os
import sys
import time

import torch
import warp as wp

wp.config.log_level = wp.LOG_WARNING
import steel_envs  # noqa: E402

device, out, n, size, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
deadline = time.monotonic() + float(os.environ.get("STAGE_LIMIT_S", "300")) - 10.0
results = []


def sync(env):
    if env.torch_device.type == "cuda":
        torch.cuda.synchronize(env.torch_device)


def measure(env_id, **kwargs):
    t = time.perf_counter()
    env = steel_envs.make_vec(env_id, num_envs=n, device=device, seed=0, **kwargs)
    build = time.perf_counter() - t
    g = torch.Generator(device=env.torch_device).manual_seed(0)
    actions = [torch.rand((n, env.action_dim), generator=g, device=env.torch_device) * 2 - 1 for _ in range(8)]
    t = time.perf_counter()
    obs, *_ = env.step(actions[0])
    sync(env)
    first = time.perf_counter() - t
    for a in actions[1:4]:
        env.step(a)
    sync(env)
    t = time.perf_counter()
    for k in range(steps):
        obs, *_ = env.step(actions[k % len(actions)])
    sync(env)
    dt = time.perf_counter() - t
    r = {
        "env_id": env_id,
        "worlds": n,
        "steps": steps,
        "build_s": round(build, 2),
        "first_step_s": round(first, 3),
        "env_steps_per_s": n * steps / dt,
        "step_ms": 1e3 * dt / steps,
    }
    if kwargs.get("obs_mode") == "rgb":
        flat = obs.reshape(n, -1)
        r.update(
            frames_per_s=n * steps / dt,
            megapixels_per_s=n * steps * size * size / dt / 1e6,
            obs_shape=list(obs.shape),
            obs_dtype=str(obs.dtype),
            obs_device=str(obs.device),
            worlds_with_varied_pixels=float((flat.amax(dim=1) > flat.amin(dim=1)).float().mean()),
            mean_pixel=float(obs.float().mean()),
        )
    env.close()
    del env, obs, actions
    gc.collect()
    return r


for env_id in ("steel_envs/CartpoleBalance-v0", "steel_envs/AntRun-v0"):
    for mode in ("rgb", "state"):
        if time.monotonic() > deadline - 20:
            results.append({"env_id": env_id, "obs_mode": mode, "status": "skipped: stage budget"})
            print(f"[pixels] {env_id} {mode}: skipped (stage budget)")
            continue
        kwargs = {"obs_mode": "rgb", "render_size": (size, size)} if mode == "rgb" else {}
        r = {"obs_mode": mode, **measure(env_id, **kwargs), "status": "ok"}
        results.append(r)
        rate = f"{r['env_steps_per_s']:12,.0f} env-steps/s ({r['step_ms']:.3f} ms/step"
        extra = f", {r['frames_per_s']:,.0f} frames/s, {r['megapixels_per_s']:,.1f} Mpx/s" if mode == "rgb" else ""
        print(
            f"[pixels] {env_id} x {n} {mode:5s}{f' {size}x{size}' if mode == 'rgb' else ''}: {rate}{extra}; "
            f"build {r['build_s']} s, first step {r['first_step_s']} s)",
            flush=True,
        )
        if mode == "rgb":
            varied = 100 * r["worlds_with_varied_pixels"]
            print(
                f"         obs {r['obs_shape']} {r['obs_dtype']} on {r['obs_device']}, {varied:.0f}% of worlds not "
                f"one colour, mean pixel {r['mean_pixel']:.1f}"
            )
        with open(out, "w") as f:
            json.dump({"device": device, "worlds": n, "size": size, "results": results}, f, indent=2)
sys.exit(0 if all(r["status"] == "ok" for r in results) else 3)
PY

cat >"$RESULTS/scripts/summary.py" <<'PY'
"""Combine the stage files into summary.txt and summary.json."""

import json
import os
import sys

res, device, budget, total = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def load(name):
    path = os.path.join(res, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


stages = []
with open(os.path.join(res, "stages.tsv")) as f:
    for line in f:
        name, status, rc, wall, limit, compiled = line.rstrip("\n").split("\t")
        stages.append(
            {
                "stage": name,
                "status": status,
                "rc": rc,
                "wall_s": float(wall),
                "limit_s": limit,
                "kernel_cache_mb": compiled,
            }
        )
pre, tests = load("preflight.json") or {}, load("tests_summary.json")
bench, train, pixels = load("bench_summary.json"), load("train_summary.json"), load("pixels_summary.json")
L = [f"steel-envs GPU check on {device}: {total} s of a {budget} s budget"]
L.append(
    f"  {pre.get('gpu', 'no GPU')} | driver {pre.get('cuda_driver')} toolkit {pre.get('cuda_toolkit')} | "
    f"conditional graphs {pre.get('conditional_graphs')} | torch {pre.get('torch')} "
    f"(CUDA {pre.get('torch_cuda_build')}) | warp {pre.get('warp')} | newton {pre.get('newton')}"
)
L.append("")
for s in stages:
    L.append(
        f"  {s['stage']:10s} {s['status']:10s} rc {s['rc']:>3s}  {s['wall_s']:7.1f} s  (limit {s['limit_s']} s; "
        f"Warp kernel cache +{s['kernel_cache_mb']} MB)"
    )
if pre.get("problems"):
    L += ["", "preflight problems:", *[f"  {p}" for p in pre["problems"]]]
if tests:
    L += ["", "a. tests: " + ", ".join(f"{tests.get(k, 0)} {k}" for k in ("passed", "failed", "error", "skipped"))]
    for t in tests.get("tests", []):
        if t["outcome"] in ("failed", "error"):
            L.append(f"  {t['outcome']}: {t['name']}: {tests.get('messages', {}).get(t['name'], '')[:200]}")
    slow = sorted((t for t in tests.get("tests", []) if t["seconds"] >= 0.05), key=lambda t: -t["seconds"])[:5]
    L += [f"  slowest: {t['name']} {t['seconds']:.1f} s" for t in slow]
if bench is not None:
    L += ["", f"b. bench ({bench['steps']} steps, random actions, env-steps/s):"]
    with open(os.path.join(res, "bench_summary.txt")) as f:
        L += ["  " + line for line in f.read().splitlines()]
if train is not None:
    L += ["", "c. train steel_envs/AntRun-v0:"]
    if "env_steps" in train:
        L.append(
            f"  {train['iterations']} iterations, {train['env_steps']:,} env-steps in {train['seconds']} s "
            f"({train['env_steps_per_s']:,} env-steps/s incl. learning), mean return (last 100) "
            f"{train['mean_return_last_100']}"
        )
    else:
        L.append("  no final line (the run did not finish)")
    for p in train.get("curve", []):
        L.append(f"  {train['curve_tag']} @ it {p['iteration']} ({p['seconds']} s): {p['value']:.2f}")
learn = {}
for s in stages:
    if s["stage"].startswith("learn_"):
        learn[s["stage"][6:]] = load(f"{s['stage']}_summary.json") or {}
if learn:
    L += ["", "e. learn (steel-envs train of every ID; env-steps/s with learning, mean return of the last 100 episodes):"]
    for name, t in learn.items():
        if "env_steps" not in t:
            L.append(f"  {name:24s} no final line (the run did not finish or was skipped)")
            continue
        curve = t.get("curve", [])
        start = f"{curve[0]['value']:.1f} -> " if curve else ""
        L.append(
            f"  {name:24s} {t['env_steps']:>13,} env-steps in {t['seconds']:6.1f} s ({t['env_steps_per_s']:>10,}/s), "
            f"mean return {start}{t['mean_return_last_100']}"
        )
if pixels is not None:
    L += ["", f"d. pixels ({pixels['worlds']} worlds, {pixels['size']}x{pixels['size']} rgb vs state):"]
    for r in pixels["results"]:
        if r.get("status") != "ok":
            L.append(f"  {r['env_id']} {r['obs_mode']}: {r['status']}")
            continue
        frames = ""
        if "frames_per_s" in r:
            frames = f", {r['frames_per_s']:,.0f} frames/s, {r['megapixels_per_s']:,.1f} Mpx/s"
        L.append(f"  {r['env_id']:32s} {r['obs_mode']:5s} {r['env_steps_per_s']:12,.0f} env-steps/s{frames}")
text = "\n".join(L) + "\n"
with open(os.path.join(res, "summary.txt"), "w") as f:
    f.write(text)
with open(os.path.join(res, "summary.json"), "w") as f:
    json.dump(
        {
            "device": device,
            "budget_s": float(budget),
            "total_s": float(total),
            "stages": stages,
            "preflight": pre,
            "tests": tests,
            "bench": bench,
            "train": train,
            "pixels": pixels,
            "learn": learn,
        },
        f,
        indent=2,
        default=str,
    )
print(text)
PY

# ------------------------------------------------------------------------------------------------ stages

PY=python3
echo "gpu_check: device $DEVICE, budget $BUDGET s, results in $RESULTS"
# First-use compilation of the CUDA kernels takes most of the budget on a fresh machine (2026-11-30, H200: the first
# GPU test 64 s, each new scene 30-40 s). A Warp kernel cache saved by an earlier run (warp_cache.tar.xz in its
# results) and carried in .gpukit/cache/ is restored first; Warp recompiles only the modules whose source changed.
if [[ -f .gpukit/cache/warp_cache.tar.xz ]]; then
  mkdir -p "$WARP_CACHE" && tar -C "$WARP_CACHE" -xJf .gpukit/cache/warp_cache.tar.xz &&
    echo "gpu_check: restored the Warp kernel cache ($(cache_mb) MB) from .gpukit/cache/warp_cache.tar.xz"
fi
run_stage preflight 60 0 $PY "$RESULTS/scripts/preflight.py" "$DEVICE" "$RESULTS/preflight.json"
if [[ $STAGE_RC -ne 0 ]]; then
  echo "gpu_check: the preflight failed (rc $STAGE_RC): no stage runs. See $RESULTS/preflight.log"
  $PY "$RESULTS/scripts/summary.py" "$RESULTS" "$DEVICE" "$BUDGET" "$(elapsed)"
  exit 2
fi

if want tests; then
  run_stage tests 130 "$KEEP_BENCH" $PY -m pytest -q -m gpu -p no:cacheprovider -rA --durations=15 \
    --junitxml="$RESULTS/tests_junit.xml" tests/test_gpu.py
  $PY "$RESULTS/scripts/tests_summary.py" "$RESULTS/tests_junit.xml" "$RESULTS/tests.log" "$RESULTS/tests_summary.json"
fi

if want bench; then
  run_stage bench 300 "$KEEP_TRAIN" $PY "$RESULTS/scripts/bench.py" "$DEVICE" "$RESULTS/bench" "$STEEL_IDS" \
    "$BENCH_WORLDS" "$BENCH_STEPS"
fi

# Training: the wall time on top of --max-seconds (imports, env build, the final PPO update, saving) is ~20-35 s.
if want train; then
  train_limit=$(($(left) - KEEP_PIXELS))
  train_seconds=$((train_limit - 35 < TRAIN_SECONDS ? train_limit - 35 : TRAIN_SECONDS))
  if ((train_seconds < TRAIN_SECONDS)); then
    echo "gpu_check: only $train_seconds s of training fit in the budget (asked $TRAIN_SECONDS s)"
  fi
  mkdir -p "$RESULTS/train"
  train_cap=$((train_seconds < 10 ? 0 : TRAIN_SECONDS + 60)) # under 10 s of training: skipped
  run_stage train "$train_cap" "$KEEP_PIXELS" steel-envs train steel_envs/AntRun-v0 --device "$DEVICE" \
    --num-envs "$TRAIN_ENVS" --max-seconds "$train_seconds" --max-iterations 100000 --save-interval 100000 \
    --seed 0 --log-dir "$RESULTS/train" --no-progress
  train_rc=$STAGE_RC
  if ((train_seconds < TRAIN_SECONDS)) && [[ $train_rc -eq 0 ]]; then
    sed -i '$ s/\tok\t/\tshortened\t/' "$RESULTS/stages.tsv"
  fi
  $PY "$RESULTS/scripts/train_summary.py" "$RESULTS/train.log" "$RESULTS/train" "$RESULTS/train_summary.json" \
    "$train_rc" 2>&1 | tee -a "$RESULTS/train.log"
fi

if want pixels; then
  run_stage pixels 90 "$KEEP_SUMMARY" $PY "$RESULTS/scripts/pixels.py" "$DEVICE" "$RESULTS/pixels_summary.json" \
    "$PIXEL_ENVS" "$PIXEL_SIZE" "$PIXEL_STEPS"
fi

# Every ID's training with thousands of worlds, one after the other; an ID that no longer fits is skipped.
if want learn; then
  for name in $ALL_IDS; do
    envs=$LEARN_ENVS
    [[ $VBD_IDS == *" $name "* ]] && envs=$LEARN_ENVS_VBD
    mkdir -p "$RESULTS/learn_$name"
    run_stage "learn_$name" $((LEARN_SECONDS + 60)) "$KEEP_SUMMARY" steel-envs train "steel_envs/$name" \
      --device "$DEVICE" --num-envs "$envs" --max-seconds "$LEARN_SECONDS" --max-iterations 100000 \
      --save-interval 100000 --seed 0 --log-dir "$RESULTS/learn_$name" --no-progress
    $PY "$RESULTS/scripts/train_summary.py" "$RESULTS/learn_$name.log" "$RESULTS/learn_$name" \
      "$RESULTS/learn_${name}_summary.json" "$STAGE_RC" 2>&1 | tee -a "$RESULTS/learn_$name.log"
  done
fi

echo
$PY "$RESULTS/scripts/summary.py" "$RESULTS" "$DEVICE" "$BUDGET" "$(elapsed)"
# After the budget: the kernel cache for the next run (outside the 8 minutes; a few seconds with 16 cores).
if [[ $DEVICE != cpu && -d $WARP_CACHE ]]; then
  tar -C "$WARP_CACHE" -cf - . | xz -T0 -6 >"$RESULTS/warp_cache.tar.xz" &&
    echo "gpu_check: saved the Warp kernel cache to $RESULTS/warp_cache.tar.xz ($(du -sm "$RESULTS/warp_cache.tar.xz" | cut -f1) MB)"
fi
if cut -f2 "$RESULTS/stages.tsv" | grep -qv '^ok$'; then
  echo "gpu_check: some stage did not pass (see above); exit 1"
  exit 1
fi
echo "gpu_check: every stage passed"
exit 0
