#!/usr/bin/env bash
# measure-adaptive.sh: the adaptive_mutex check of docs/ADAPTIVE.md. Runs every
# loop preset on every runtime of this build, 1..64 LTs, every mutex, then
# ranks `adaptive` against the best other fibersync mutex and the library
# (fibersync-report rank). Needs a Release build (scripts/main.sh makes one)
# and the report tool (.venv); writes OUTDIR/rank.md, OUTDIR/rank.png and
# OUTDIR/leaders.md (fibersync-report leaders: which lock leads each load).
# Then it measures again, RECHECK_REPS repetitions each (default 15; 0
# skips it), the configurations the ranking leaves in doubt or below the
# library (scripts/recheck-adaptive.sh: OUTDIR/recheck/rank.md, and the
# sweep's ranking with their rows measured again, OUTDIR/recheck/combined.md).
# About 40 minutes on 2 cores for the sweep (5 repetitions; REPS=3 takes ~21
# but leaves the rank without its resampled interval) and 20 for the
# recheck; run it on an idle machine.
# BENCH=path selects another build (e.g. one with Argobots); RUNTIMES=a,b
# only those runtimes (default: every runtime of the build), e.g. after a
# change that only the runtimes whose idle carriers do not steal compile.
#   bash scripts/measure-adaptive.sh [OUTDIR] [extra fibersync-bench flags]
#   e.g. bash scripts/measure-adaptive.sh results/adaptive-2node --topology 2x1 --pinning compact
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=${1:-results/adaptive-$(date +%Y%m%d-%H%M%S)}
shift || true
bench=${BENCH:-build/release/bench/fibersync-bench}
[ -x "$bench" ] || { echo "measure-adaptive: build first (bash scripts/main.sh)" >&2; exit 2; }
mkdir -p "$out"
runtimes=${RUNTIMES:-$("$bench" --list | sed -n '/^runtimes/,/^presets/s/^  \([a-z_]*\): .*/\1/p' | paste -sd, -)}
lts=1,2,4,8,16,32,64
common=(--runtime "$runtimes" --mutex all --reps "${REPS:-5}" --duration-ms "${DURATION_MS:-100}")
# A run that fails (e.g. one past the harness' timeout) is left out of its
# preset's results, which keep every completed run (the bench rewrites them
# after each run); the sweep goes on, ranks what completed, and exits 1
# naming the presets with a failed run.
failed=()
extra=("$@")
sweep() {  # sweep PRESET [fibersync-bench flags]
  local preset=$1
  shift
  echo "== $preset" >&2
  "$bench" --preset "$preset" "$@" --out "$out/$preset" "${extra[@]}" >/dev/null || failed+=("$preset")
}
for preset in default hot-handover paper-coop high-contention low-contention; do
  sweep "$preset" "${common[@]}" --lts "$lts"
done
# The article's sweeps keep their own thread counts (1, 2, 4) and a reduced grid.
sweep poisson-hold "${common[@]}" --set 'hold_fraction=[0.1,0.5,0.9]'
sweep poisson-rate "${common[@]}" --set 'lock_rate_per_ms=[10,1000]'
sweep text-stats --runtime "$runtimes" --mutex all --reps "${REPS:-5}" --lts "$lts"
shopt -s nullglob
jsons=("$out"/*.json)
[ ${#jsons[@]} -gt 0 ] || { echo "measure-adaptive: no preset finished" >&2; exit 1; }
.venv/bin/fibersync-report rank "${jsons[@]}" --worst 25 --plot "$out/rank.png" | tee "$out/rank.md"
# Which lock leads each load (docs/algorithms.md, "Per load, measured").
.venv/bin/fibersync-report leaders "${jsons[@]}" > "$out/leaders.md" ||
  echo "measure-adaptive: no leaders table (see the error above)" >&2
echo "measure-adaptive: ranking in $out/rank.md, figure in $out/rank.png, leaders per load in $out/leaders.md" >&2
if [ "${RECHECK_REPS:-15}" != 0 ]; then
  BENCH=$bench bash scripts/recheck-adaptive.sh "$out" || failed+=("recheck")
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "measure-adaptive: failed runs in (ranked from what completed): ${failed[*]}" >&2
  exit 1
fi
