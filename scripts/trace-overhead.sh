#!/usr/bin/env bash
# trace-overhead.sh: what --trace costs, measured with the harness itself.
# Runs the hot-handover and default presets on boost_fiber (2 carriers, 16
# LTs, every mutex) with and without --trace, ROUNDS times, and prints per
# mutex the median throughput of each, the ratio of the medians and the
# median of the paired ratios (docs/benchmarks/trace.md). The runs of one
# mutex with and without --trace follow each other (their order swaps every
# round), so load from other processes hits both alike and each pair is
# compared under the same conditions.
#   scripts/trace-overhead.sh BENCH [ROUNDS] [OUTDIR]
#   BASELINE=path/to/older/fibersync-bench adds a column for a build without
#   the trace hooks (the cost of the hooks when --trace is off).
#   CARRIERS=1 runs on one carrier instead (a control without work stealing,
#   whose scheduling noise is much smaller).
set -euo pipefail
bench=${1:?usage: trace-overhead.sh BENCH [ROUNDS] [OUTDIR]}
rounds=${2:-5}
out=${3:-results/trace-overhead}
mkdir -p "$out"
mutexes=$("$bench" --list | sed -n 's/^  boost_fiber: //p' | tr -d ' ')

run_mode() {  # mode preset mutex round
  local common=(--preset "$2" --runtime boost_fiber --mutex "$3" --lts 16 --carriers "${CARRIERS:-2}" --reps 1)
  local prefix="$out/$2@$3@$1@$4"
  case $1 in
    off) "$bench" "${common[@]}" --out "$prefix" >/dev/null 2>&1 ;;
    on)
      "$bench" "${common[@]}" --trace "$out/trace.json" --out "$prefix" >/dev/null 2>&1
      rm -f "$out/trace.json"  # tens of MB; only the throughput is needed
      ;;
    base) "$BASELINE" "${common[@]}" --out "$prefix" >/dev/null 2>&1 ;;
  esac
}

modes=(off on)
[ -n "${BASELINE:-}" ] && modes+=(base)
for round in $(seq 1 "$rounds"); do
  for preset in hot-handover default; do
    for mutex in ${mutexes//,/ }; do
      order=("${modes[@]}")
      [ $((round % 2)) -eq 0 ] && order=(on off ${BASELINE:+base})
      echo "round $round/$rounds $preset $mutex" >&2
      for mode in "${order[@]}"; do run_mode "$mode" "$preset" "$mutex" "$round"; done
    done
  done
done

python3 - "$out" "${modes[@]}" <<'PY'
import glob, json, math, os, statistics, sys
out, modes = sys.argv[1], sys.argv[2:]
tp = {}  # (preset, mutex, mode, round) -> throughput
for path in glob.glob(f"{out}/*@*@*@*.json"):
    preset, mutex, mode, rnd = os.path.basename(path)[:-5].split("@")
    for r in json.load(open(path))["runs"]:
        tp[(preset, mutex, mode, int(rnd))] = r["throughput_per_ms"]
def series(preset, mutex, mode):
    return {k[3]: v for k, v in tp.items() if k[:3] == (preset, mutex, mode)}
base = "base" in modes
head = ("| preset | mutex | pairs | off: median (min-max) acq/ms | on: median (min-max) acq/ms "
        "| on/off (medians) | on/off (median of pairs) |")
if base:
    head += " before hooks: median acq/ms | off/before (medians) |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
pair_ratios = []
for preset in ("hot-handover", "default"):
    for mutex in sorted({k[1] for k in tp if k[0] == preset}):
        off, on = series(preset, mutex, "off"), series(preset, mutex, "on")
        rounds = sorted(set(off) & set(on))
        if not rounds:
            continue
        m_off, m_on = statistics.median(off.values()), statistics.median(on.values())
        paired = statistics.median(on[r] / off[r] for r in rounds)
        pair_ratios.append(paired)
        line = (f"| {preset} | {mutex} | {len(rounds)} | {m_off:.1f} ({min(off.values()):.1f}-{max(off.values()):.1f}) "
                f"| {m_on:.1f} ({min(on.values()):.1f}-{max(on.values()):.1f}) | {m_on / m_off:.3f} | {paired:.3f} |")
        if base:
            b = series(preset, mutex, "base")
            if b:
                m_b = statistics.median(b.values())
                line += f" {m_b:.1f} | {m_off / m_b:.3f} |"
        print(line)
print("\ngeometric mean of the paired medians (on/off): "
      f"{math.exp(sum(map(math.log, pair_ratios)) / len(pair_ratios)):.3f}")
PY
