#!/usr/bin/env bash
# measure-adaptive.sh: the adaptive_mutex check of docs/ADAPTIVE.md. Runs every
# loop preset on every runtime of this build, 1..64 LTs, every mutex, then
# ranks `adaptive` against the best other fibersync mutex and the library
# (fibersync-report rank). Needs a Release build (scripts/main.sh makes one)
# and the report tool (.venv). About 30-40 minutes on 2 cores; run it on an
# otherwise idle machine. BENCH=path selects another build (e.g. one with Argobots).
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
runtimes=$("$bench" --list | sed -n '/^runtimes/,/^presets/s/^  \([a-z_]*\): .*/\1/p' | paste -sd, -)
lts=1,2,4,8,16,32,64
common=(--runtime "$runtimes" --mutex all --reps "${REPS:-3}" --duration-ms "${DURATION_MS:-100}")
for preset in default hot-handover paper-coop high-contention low-contention; do
  echo "== $preset" >&2
  "$bench" --preset "$preset" "${common[@]}" --lts "$lts" --out "$out/$preset" "$@" >/dev/null
done
# The article's sweeps keep their own thread counts (1, 2, 4) and a reduced grid.
"$bench" --preset poisson-hold "${common[@]}" --set 'hold_fraction=[0.1,0.5,0.9]' --out "$out/poisson-hold" "$@" >/dev/null
"$bench" --preset poisson-rate "${common[@]}" --set 'lock_rate_per_ms=[10,1000]' --out "$out/poisson-rate" "$@" >/dev/null
"$bench" --preset text-stats --runtime "$runtimes" --mutex all --reps "${REPS:-3}" --lts "$lts" --out "$out/text-stats" "$@" >/dev/null
.venv/bin/fibersync-report rank "$out"/*.json --worst 25 | tee "$out/rank.md"
