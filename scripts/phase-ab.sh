#!/usr/bin/env bash
# phase-ab.sh: an interleaved A/B of mutexes, split by the machine's phase.
# Some machines (our EPYC VM) change their core-to-core latency for seconds
# to minutes at a time, and a lock can be ahead in one phase and behind in
# the other (docs/ADAPTIVE.md, finding 34). This runs CYCLES cycles; each
# times the round trip of one cache line between two CPUs
# (fibersync-line-probe), runs every configuration of CONFIGS once (one
# repetition of each mutex of MUTEX, DURATION_MS each, default 100; each
# cycle starts one mutex further on in MUTEX), and
# times the round trip again. Then `fibersync-report phases` gives, per
# configuration and phase (fast or slow), each mutex's median ratio to
# BASELINE (default ttas) within a cycle.
# CONFIGS: one configuration per line, as fibersync-bench arguments (shell
# words; '#' starts a comment line), or a recheck plan (plan.json, from
# scripts/recheck-adaptive.sh or `fibersync-report rank --recheck`), whose
# mutexes are replaced by MUTEX. Writes OUTDIR/phases.tsv, the bench's files
# OUTDIR/c<cycle>-<k>.csv/.json and OUTDIR/phases.md; OUTDIR must be new or
# empty. Relative paths are taken from the repository's root. The binaries:
# BENCH (default build/release/bench/fibersync-bench) and PROBE (default
# fibersync-line-probe beside it).
#   MUTEX=adaptive,ttas bash scripts/phase-ab.sh OUTDIR CYCLES CONFIGS
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
usage="usage: MUTEX=M1,M2,... bash scripts/phase-ab.sh OUTDIR CYCLES CONFIGS"
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
out=$1 cycles=$2 configs=$3
bench=${BENCH:-build/release/bench/fibersync-bench}
probe=${PROBE:-$(dirname "$bench")/fibersync-line-probe}
baseline=${BASELINE:-ttas}
report=.venv/bin/fibersync-report
[ -n "${MUTEX:-}" ] || { echo "phase-ab: set MUTEX to the mutexes to compare, $baseline among them ($usage)" >&2; exit 2; }
[[ ",$MUTEX," == *",$baseline,"* ]] || { echo "phase-ab: MUTEX must include the baseline $baseline" >&2; exit 2; }
[[ "$cycles" =~ ^[1-9][0-9]*$ ]] || { echo "phase-ab: CYCLES must be a positive number, not '$cycles'" >&2; exit 2; }
[[ "${DURATION_MS:-100}" =~ ^[1-9][0-9]*$ ]] || { echo "phase-ab: DURATION_MS must be a positive number" >&2; exit 2; }
[ -x "$bench" ] || { echo "phase-ab: no bench at $bench: build first (bash scripts/main.sh)" >&2; exit 2; }
[ -x "$probe" ] || { echo "phase-ab: no line probe at $probe: build first (bash scripts/main.sh)" >&2; exit 2; }
[ -x "$report" ] || { echo "phase-ab: no report tool in .venv (bash scripts/main.sh)" >&2; exit 2; }
[ -f "$configs" ] || { echo "phase-ab: $configs: no such file" >&2; exit 2; }
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "phase-ab: $out exists and is not empty" >&2
  exit 2
fi
# One line per configuration, its bench arguments quoted for the shell.
configs_text=$(.venv/bin/python - "$configs" <<'PY'
import json, shlex, sys
path = sys.argv[1]
try:
    if path.endswith(".json"):
        with open(path) as fh:
            plan = json.load(fh)
        for entry in plan:
            a = [str(w) for w in entry["bench_args"]]
            # MUTEX replaces the plan's mutexes.
            print(shlex.join(w for i, w in enumerate(a) if w != "--mutex" and (i == 0 or a[i - 1] != "--mutex")))
    else:
        with open(path) as fh:
            for number, line in enumerate(fh, 1):
                if line.strip() and not line.lstrip().startswith("#"):
                    try:
                        print(shlex.join(shlex.split(line)))
                    except ValueError as exc:
                        sys.exit(f"phase-ab: {path}:{number}: {exc}")
except (OSError, UnicodeDecodeError) as exc:
    sys.exit(f"phase-ab: {path}: cannot read: {exc}")
except (ValueError, KeyError, TypeError) as exc:
    sys.exit(f"phase-ab: {path}: not a recheck plan ({type(exc).__name__}: {exc})")
PY
) || exit 2
lines=()
[ -n "$configs_text" ] && mapfile -t lines <<<"$configs_text"
[ ${#lines[@]} -gt 0 ] || { echo "phase-ab: $configs has no configuration" >&2; exit 2; }
created_out=0
[ -e "$out" ] || created_out=1
mkdir -p "$out"
echo "phase-ab: $cycles cycles of ${#lines[@]} configurations x {$MUTEX}" >&2
IFS=, read -r -a mutexes <<<"$MUTEX"
failed=0
for cycle in $(seq 1 "$cycles"); do
  # Each cycle starts one mutex further on, so that no mutex always runs
  # first (BENCHMARKS.md session 36: the first of each repetition lost ~4%
  # in paper-coop on Argobots).
  shift_by=$(((cycle - 1) % ${#mutexes[@]}))
  order=("${mutexes[@]:shift_by}" "${mutexes[@]:0:shift_by}")
  cycle_mutexes=$(IFS=,; echo "${order[*]}")
  before=$("$probe") || { echo "phase-ab: the line probe failed" >&2; exit 2; }
  for k in "${!lines[@]}"; do
    eval "set -- ${lines[$k]}"
    if ! "$bench" "$@" --mutex "$cycle_mutexes" --reps 1 --duration-ms "${DURATION_MS:-100}" --out "$out/c$cycle-$k" \
      >/dev/null 2>"$out/bench.err"; then
      # In the first cycle a failure is a bad configuration: stop there,
      # and leave no partial results behind.
      if [ "$cycle" -eq 1 ]; then
        echo "phase-ab: configuration $((k + 1)) ('${lines[$k]}'): $(tail -1 "$out/bench.err")" >&2
        if [ "$created_out" -eq 1 ]; then rm -rf "$out"; else find "$out" -mindepth 1 -delete; fi
        exit 2
      fi
      failed=$((failed + 1))
    fi
    cat "$out/bench.err" >>"$out/bench.log"
  done
  after=$("$probe") || { echo "phase-ab: the line probe failed" >&2; exit 2; }
  echo "$cycle $before $after" >>"$out/phases.tsv"
  echo "phase-ab: cycle $cycle/$cycles, line round trip $before / $after ns" >&2
done
rm -f "$out/bench.err"
# phases.md whole or not at all.
if ! "$report" phases "$out" --baseline "$baseline" >"$out/.phases.md.part"; then
  rm -f "$out/.phases.md.part"
  exit 2
fi
mv "$out/.phases.md.part" "$out/phases.md"
cat "$out/phases.md"
if [ "$failed" -gt 0 ]; then
  echo "phase-ab: $failed runs failed (see $out/bench.log)" >&2
  exit 1
fi
