#!/usr/bin/env bash
# recheck-adaptive.sh: measure again, with more repetitions, the configurations
# that an adaptive_mutex sweep (scripts/measure-adaptive.sh) leaves in doubt:
# those whose resampled interval does not put them clearly within 10% of the
# best other fibersync mutex (with fewer than 5 repetitions, no interval:
# those below 0.9), and those below the library. Each configuration runs
# again on its own, with its recorded scenario, runtime, LTs, carriers,
# pinning, topology and swept fields, for adaptive, the library and every
# other mutex whose median was at least half the best
# (`fibersync-report rank --recheck`), RECHECK_REPS repetitions (default 15)
# of DURATION_MS (default 100). Writes SWEEPDIR/recheck/plan.json, one result
# per configuration (NNN.csv, NNN.json), SWEEPDIR/recheck/rank.md, the
# ranking of these runs alone, and SWEEPDIR/recheck/combined.md, the sweep's
# ranking with each rechecked configuration's row taken from the recheck
# (`fibersync-report rank --remeasured`): the headline, followed by the same
# ranking within each of the machine's phases (`--by-phase`: fast and slow
# cache-line round trips, each configuration's runs of one phase against
# the others' of the same phase). A SWEEPDIR/recheck
# left by an earlier run is replaced. The sweep's own rank.md stays as it
# was: docs/ADAPTIVE.md ("How close it comes") says how they are read. About
# 20 minutes for 60 configurations on 2 cores.
#   bash scripts/recheck-adaptive.sh SWEEPDIR
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
[ $# -eq 1 ] || { echo "usage: recheck-adaptive.sh SWEEPDIR" >&2; exit 2; }
sweep=$1
bench=${BENCH:-build/release/bench/fibersync-bench}
reps=${RECHECK_REPS:-15}
report=.venv/bin/fibersync-report
[ -x "$bench" ] || { echo "recheck-adaptive: build first (bash scripts/main.sh)" >&2; exit 2; }
[ -x "$report" ] || { echo "recheck-adaptive: no report tool in .venv (bash scripts/main.sh)" >&2; exit 2; }
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "recheck-adaptive: RECHECK_REPS must be a positive number" >&2; exit 2; }
shopt -s nullglob
jsons=("$sweep"/*.json)
[ ${#jsons[@]} -gt 0 ] || { echo "recheck-adaptive: no sweep results (*.json) in $sweep" >&2; exit 2; }
out="$sweep/recheck"
rm -rf "$out"
mkdir -p "$out"
"$report" rank "${jsons[@]}" --worst 0 --recheck "$out/plan.json" >/dev/null
# One line per configuration: its description, then its bench arguments,
# each quoted for the shell (shlex).
mapfile -t plan < <(.venv/bin/python - "$out/plan.json" <<'PY'
import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    print(shlex.quote(f"{entry['configuration']} ({'; '.join(entry['reasons'])})"), shlex.join(entry["bench_args"]))
PY
)
echo "recheck-adaptive: ${#plan[@]} configurations to measure again, $reps repetitions each" >&2
failed=()
for i in "${!plan[@]}"; do
  eval "set -- ${plan[$i]}"
  what=$1
  shift
  echo "== recheck $((i + 1))/${#plan[@]}: $what" >&2
  "$bench" "$@" --reps "$reps" --duration-ms "${DURATION_MS:-100}" --out "$(printf '%s/%03d' "$out" "$i")" \
    >/dev/null || failed+=("$what")
done
results=("$out"/[0-9]*.json)
if [ ${#plan[@]} -eq 0 ]; then
  echo "recheck-adaptive: nothing to measure again" | tee "$out/rank.md"
elif [ ${#results[@]} -gt 0 ]; then
  "$report" rank "${results[@]}" --worst 100 | tee "$out/rank.md"
  if "$report" rank "${jsons[@]}" --remeasured "${results[@]}" --worst 40 --by-phase > "$out/.combined.md.part"; then
    mv "$out/.combined.md.part" "$out/combined.md"
    head -n 6 "$out/combined.md"
    echo "recheck-adaptive: ranking of the rechecked configurations in $out/rank.md," \
      "of the sweep with them in $out/combined.md" >&2
  else
    rm -f "$out/.combined.md.part"
    echo "recheck-adaptive: ranking of the rechecked configurations in $out/rank.md; no combined ranking" >&2
    failed+=("the combined ranking")
  fi
fi
if [ ${#failed[@]} -gt 0 ]; then
  printf 'recheck-adaptive: failed runs in: %s\n' "${failed[@]}" >&2
  exit 1
fi
