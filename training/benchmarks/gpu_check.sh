#!/usr/bin/env bash
# One prepared GPU check of steel-envs: a preflight, then stages in a fixed time budget (8 minutes on a GPU, preflight
# included), each under its own `timeout`, so one hang cannot eat the budget. Each stage is a command of `python -m
# steel_envs.training.benchmarks.gpu_stages` (its docstring says what each writes); this script orders them, sizes them
# to the budget and sets up the environment. Stages: tests (tests/test_gpu.py), bench (every SolverSteel ID at 4,096
# and 16,384 worlds), train (AntRun, 3 minutes, 4,096 worlds), pixels (rgb vs state, 1,024 worlds); only when listed,
# learn (every ID in turn, 60 s each: a second device call); --learn ID: one seed of ID's own PPO config for at most
# 240 s, its env-steps/s and return curve in docs/gpu/<ID>.json (alone without --stages). Run it from the repository
# root after `source .gpukit/b/unpack.sh` in the same shell (shared/gpu-kit); a .gpukit/cache/warp_cache.tar.xz of an
# earlier run restores the Warp kernel cache. --device cpu: a dry run at tiny sizes (docs/ untouched). Results:
# <stage>.log, <stage>_summary.json, summary.txt / .json, gpu_check.log (the transcript). Exit 0 when every stage
# passed, 1 when one failed, timed out, was cut short or skipped, 2 on a failed preflight or bad arguments. Overrides:
# GPU_CHECK_BUDGET_S (470: 8 minutes less a kill grace; 1800 on cpu), the GPU_CHECK_* sizes below. Nothing installed.
set -uo pipefail
export PYTHONUNBUFFERED=1
# The source tree's steel_envs/ lacks the subpackages pyproject.toml maps into it: keep it off sys.path (-P).
export PYTHONSAFEPATH=1
USAGE="usage: bash training/benchmarks/gpu_check.sh <results-dir> [--device cuda:0|cpu] [--stages LIST] [--learn ID]
  --stages LIST  comma-separated of tests, bench, train, pixels, learn (default: the first four; none with --learn)
  --learn ID     one seed of ID's PPO config for at most 240 s: env-steps/s and curve in docs/gpu/<ID>.json"
usage() { [[ ${1:-2} == 0 ]] && echo "$USAGE" || echo "$USAGE" >&2; exit "${1:-2}"; }
[[ ${1:-} == -h || ${1:-} == --help ]] && usage 0
[[ $# -ge 1 && $1 != -* ]] || usage
RESULTS=$1 DEVICE=cuda:0 STAGES=default LEARN_ID= && shift
while [[ $# -gt 0 ]]; do
  case $1 in
    --device) [[ $# -ge 2 ]] || usage; DEVICE=$2; shift 2 ;;
    --stages) [[ $# -ge 2 ]] || usage; STAGES=$2; shift 2 ;;
    --learn) [[ $# -ge 2 ]] || usage; LEARN_ID=$2; shift 2 ;;
    --device=* | --stages=* | --learn=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
    -h | --help) usage 0 ;;
    *) echo "gpu_check: unknown argument $1" >&2; usage ;;
  esac
done
[[ $STAGES == default ]] && { [[ -n $LEARN_ID ]] && STAGES= || STAGES=tests,bench,train,pixels; }
for stage in ${STAGES//,/ }; do
  [[ $stage =~ ^(tests|bench|train|pixels|learn)$ ]] || { echo "gpu_check: unknown stage $stage" >&2; usage; }
done
[[ -z $LEARN_ID || ${LEARN_ID##*/} =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "gpu_check: bad ID $LEARN_ID" >&2; usage; }
want() { [[ ",$STAGES," == *",$1,"* ]]; }
mkdir -p "$RESULTS" && RESULTS=$(cd "$RESULTS" && pwd) && cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
: >"$RESULTS/stages.tsv"
exec > >(tee -a "$RESULTS/gpu_check.log") 2>&1 && TEE_PID=$!
# At exit, close the transcript pipe and let tee write its last lines before the script's status is reported.
finish() { exec 1>&- 2>&-; wait "$TEE_PID" 2>/dev/null || sleep 0.5; }
trap finish EXIT
pick() { [[ $DEVICE == cpu ]] && echo "$2" || echo "$1"; } # pick GPU-SIZE CPU-SIZE
BUDGET=${GPU_CHECK_BUDGET_S:-$(pick 470 1800)}
BENCH_WORLDS=${GPU_CHECK_BENCH_WORLDS:-$(pick 4096,16384 16,64)} BENCH_STEPS=${GPU_CHECK_BENCH_STEPS:-$(pick 100 20)}
TRAIN_SECONDS=${GPU_CHECK_TRAIN_SECONDS:-$(pick 180 20)} TRAIN_ENVS=${GPU_CHECK_TRAIN_ENVS:-$(pick 4096 64)}
PIXEL_ENVS=${GPU_CHECK_PIXEL_ENVS:-$(pick 1024 4)} PIXEL_SIZE=${GPU_CHECK_PIXEL_SIZE:-$(pick 64 16)}
LEARN_SECONDS=${GPU_CHECK_LEARN_SECONDS:-$(pick 60 10)} LEARN_ENVS=${GPU_CHECK_LEARN_ENVS:-$(pick 4096 32)}
PIXEL_STEPS=$(pick 50 5) LEARN_ENVS_VBD=${GPU_CHECK_LEARN_ENVS_VBD:-$(pick 1024 4)} # the SolverVBD IDs' worlds
LEARN_ID_SECONDS=${GPU_CHECK_LEARN_ID_SECONDS:-$(pick 240 10)} LEARN_ID_ENVS=${GPU_CHECK_LEARN_ID_ENVS:-$(pick "" 16)}
ALL_IDS="AntRun-v0 CartpoleBalance-v0 CartpoleSwingup-v0 PushCube-v0 QuadrupedVelocity-v0 HumanoidRun-v0"
ALL_IDS+=" SoftPush-v0 ClothFold-v0"
# Seconds kept for the stages after a stage (its limit: the smaller of its cap and what is left minus these). Training
# outlasts its budget by ~20-35 s (imports, env build, last update, saving), up to ~90 s on a cold kernel cache.
KEEP_SUMMARY=10
KEEP_LEARN_ID=$([[ -n $LEARN_ID ]] && echo $((LEARN_ID_SECONDS + 90 + KEEP_SUMMARY)) || echo $KEEP_SUMMARY)
KEEP_PIXELS=$(want pixels && echo $((35 + KEEP_LEARN_ID)) || echo "$KEEP_LEARN_ID")
KEEP_TRAIN=$(want train && echo $((TRAIN_SECONDS + 35 + KEEP_PIXELS)) || echo "$KEEP_PIXELS")
KEEP_BENCH=$(want bench && echo $((60 + KEEP_TRAIN)) || echo "$KEEP_TRAIN")
T0=$(date +%s.%N)
STAGE=(python3 -m steel_envs.training.benchmarks.gpu_stages)
WARP_CACHE=${WARP_CACHE_PATH:-$HOME/.cache/warp} CACHED=.gpukit/cache/warp_cache.tar.xz # the cache carried in
cache_mb() { du -sm "$WARP_CACHE" 2>/dev/null | cut -f1 || echo 0; }
elapsed() { awk -v t0="$T0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t0 }'; }
left() { awk -v t0="$T0" -v now="$(date +%s.%N)" -v b="$BUDGET" 'BEGIN { printf "%d", b - (now - t0) }'; }
shortened() { sed -i '$ s/\tok\t/\tshortened\t/' "$RESULTS/stages.tsv"; } # the last stage ran with less time
# training_seconds ASKED KEEP: what fits of ASKED [s] once the stages after it keep KEEP and it keeps 35 s (said).
training_seconds() {
  local s=$(($(left) - $2 - 35)) && ((s < $1)) && echo "gpu_check: only $s s of training fit (asked $1 s)" >&2
  echo $((s < $1 ? s : $1))
}
# run_stage NAME CAP KEEP COMMAND...: run COMMAND under `timeout` (SIGINT, so pytest and Python report what they
# have; SIGKILL 10 s later), its output to the transcript and RESULTS/NAME.log; record status, rc and wall time.
run_stage() {
  local name=$1 cap=$2 keep=$3 remaining limit start wall rc status cache0 compiled && shift 3
  remaining=$(left) && limit=$((remaining - keep < cap ? remaining - keep : cap))
  if ((limit < 10)); then
    echo "== stage $name: skipped, only $remaining s left of the $BUDGET s budget"
    printf '%s\tskipped\t-\t0.0\t%s\t0\n' "$name" "$limit" >>"$RESULTS/stages.tsv"
    STAGE_RC=125 && return
  fi
  echo && echo "== stage $name: limit $limit s ($remaining s left of $BUDGET s, at $(elapsed) s)" && echo "   $*"
  start=$(date +%s.%N) cache0=$(cache_mb)
  STAGE_LIMIT_S=$limit timeout --signal=INT --kill-after=10 "$limit" "$@" 2>&1 | tee "$RESULTS/$name.log"
  rc=${PIPESTATUS[0]}
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  compiled=$(($(cache_mb) - ${cache0:-0}))
  case $rc in 0) status=ok ;; 124 | 137) status=timeout ;; 3) status=incomplete ;; *) status=failed ;; esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" "$wall" "$limit" "$compiled" >>"$RESULTS/stages.tsv"
  echo "== stage $name: $status (rc $rc) in $wall s; Warp kernel cache +$compiled MB"
  STAGE_RC=$rc
}
# train_stage NAME CAP KEEP SECONDS ENV_ID WORLDS: steel-envs train, then its figures (train-summary).
train_stage() {
  mkdir -p "$RESULTS/$1"
  run_stage "$1" "$2" "$3" steel-envs train "$5" --device "$DEVICE" --num-envs "$6" --max-seconds "$4" \
    --max-iterations 100000 --save-interval 100000 --seed 0 --log-dir "$RESULTS/$1" --no-progress
  "${STAGE[@]}" train-summary --results "$RESULTS" --name "$1" --stage-rc "$STAGE_RC" 2>&1 | tee -a "$RESULTS/$1.log"
}
echo "gpu_check: device $DEVICE, budget $BUDGET s, results in $RESULTS"
# First-use CUDA compilation takes most of the budget on a fresh machine; Warp recompiles only changed modules.
if [[ -f $CACHED ]] && mkdir -p "$WARP_CACHE" && tar -C "$WARP_CACHE" -xJf $CACHED; then
  echo "gpu_check: restored the Warp kernel cache ($(cache_mb) MB) from $CACHED"
fi
summary() { "${STAGE[@]}" summary --results "$RESULTS" --device "$DEVICE" --budget "$BUDGET" --total "$(elapsed)"; }
run_stage preflight 60 0 "${STAGE[@]}" preflight --results "$RESULTS" --device "$DEVICE"
[[ $STAGE_RC -ne 0 ]] && echo "gpu_check: the preflight failed (rc $STAGE_RC): no stage runs" && { summary; exit 2; }
if want tests; then
  run_stage tests 130 "$KEEP_BENCH" python3 -m pytest -q -m gpu -p no:cacheprovider -rA --durations=15 \
    --junitxml="$RESULTS/tests_junit.xml" tests/test_gpu.py
  "${STAGE[@]}" tests-summary --results "$RESULTS"
fi
want bench && run_stage bench 300 "$KEEP_TRAIN" "${STAGE[@]}" bench --results "$RESULTS" --device "$DEVICE" \
  --num-envs "$BENCH_WORLDS" --steps "$BENCH_STEPS"
if want train; then
  seconds=$(training_seconds "$TRAIN_SECONDS" "$KEEP_PIXELS")
  cap=$((seconds < 10 ? 0 : TRAIN_SECONDS + 60)) # under 10 s of training: skipped
  train_stage train "$cap" "$KEEP_PIXELS" "$seconds" steel_envs/AntRun-v0 "$TRAIN_ENVS"
  ((seconds < TRAIN_SECONDS)) && [[ $STAGE_RC -eq 0 ]] && shortened
fi
want pixels && run_stage pixels 90 "$KEEP_LEARN_ID" "${STAGE[@]}" pixels --results "$RESULTS" --device "$DEVICE" \
  --num-envs "$PIXEL_ENVS" --size "$PIXEL_SIZE" --steps "$PIXEL_STEPS"
if [[ -n $LEARN_ID ]]; then
  name=${LEARN_ID##*/}
  seconds=$(training_seconds "$LEARN_ID_SECONDS" $((55 + KEEP_SUMMARY)))
  run_stage "curve_$name" $((seconds < 10 ? 0 : seconds + 90)) "$KEEP_SUMMARY" "${STAGE[@]}" learn "$LEARN_ID" \
    --device "$DEVICE" --seconds "$seconds" --out "$RESULTS/curve_$name.json" --log-dir "$RESULTS/curve_$name" \
    ${LEARN_ID_ENVS:+--num-envs "$LEARN_ID_ENVS"}
  [[ $STAGE_RC -eq 0 && $DEVICE != cpu ]] && mkdir -p docs/gpu && cp "$RESULTS/curve_$name.json" "docs/gpu/$name.json"
  ((seconds < LEARN_ID_SECONDS)) && [[ $STAGE_RC -eq 0 ]] && shortened
fi
# Every ID's training with thousands of worlds, one after the other; an ID that no longer fits is skipped.
if want learn; then
  for name in $ALL_IDS; do
    case $name in SoftPush-v0 | ClothFold-v0) envs=$LEARN_ENVS_VBD ;; *) envs=$LEARN_ENVS ;; esac
    train_stage "learn_$name" $((LEARN_SECONDS + 60)) "$KEEP_SUMMARY" "$LEARN_SECONDS" "steel_envs/$name" "$envs"
  done
fi
echo && summary
# After the budget: the kernel cache for the next run (outside the 8 minutes; a few seconds with 16 cores).
SAVED=$RESULTS/warp_cache.tar.xz
if [[ $DEVICE != cpu && -d $WARP_CACHE ]] && tar -C "$WARP_CACHE" -cf - . | xz -T0 -6 >"$SAVED"; then
  echo "gpu_check: saved the Warp kernel cache to $SAVED ($(du -sm "$SAVED" | cut -f1) MB)"
fi
cut -f2 "$RESULTS/stages.tsv" | grep -qv '^ok$' && echo "gpu_check: some stage did not pass; exit 1" && exit 1
echo "gpu_check: every stage passed"
