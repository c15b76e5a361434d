#!/usr/bin/env bash
# trace-overhead.sh: what --trace costs, measured with the harness itself.
# Runs the hot-handover and default presets on boost_fiber (2 carriers, 16
# LTs, every mutex) with and without --trace, ROUNDS times, and prints the
# median throughput of each and their ratio (docs/benchmarks/trace.md).
# The two modes alternate run by run (and swap order every round), so load
# from other processes hits both alike.
#   scripts/trace-overhead.sh BENCH [ROUNDS] [OUTDIR]
#   BASELINE=path/to/older/fibersync-bench adds a column for a build without
#   the trace hooks (the cost of the hooks when --trace is off).
set -euo pipefail
bench=${1:?usage: trace-overhead.sh BENCH [ROUNDS] [OUTDIR]}
rounds=${2:-5}
out=${3:-results/trace-overhead}
mkdir -p "$out"

run_mode() {  # mode preset round
  local common=(--preset "$2" --runtime boost_fiber --lts 16 --carriers 2 --reps 1)
  case $1 in
    off) "$bench" "${common[@]}" --out "$out/$2-off-$3" >/dev/null 2>&1 ;;
    on)
      "$bench" "${common[@]}" --trace "$out/trace/$2-$3.json" --out "$out/$2-on-$3" >/dev/null 2>&1
      rm -rf "$out/trace"  # tens of MB per run; only the throughput is needed
      ;;
    base) "$BASELINE" "${common[@]}" --out "$out/$2-base-$3" >/dev/null 2>&1 ;;
  esac
}

modes=(off on)
[ -n "${BASELINE:-}" ] && modes+=(base)
for round in $(seq 1 "$rounds"); do
  for preset in hot-handover default; do
    order=("${modes[@]}")
    [ $((round % 2)) -eq 0 ] && order=(on off ${BASELINE:+base})
    for mode in "${order[@]}"; do
      echo "round $round/$rounds $preset $mode" >&2
      run_mode "$mode" "$preset" "$round"
    done
  done
done

python3 - "$out" "${modes[@]}" <<'EOF'
import glob, json, math, statistics, sys
out, modes = sys.argv[1], sys.argv[2:]
tp = {}  # (preset, mutex, mode) -> [throughput]
for path in glob.glob(f"{out}/*-*-*.json"):
    preset, mode, _ = path.rsplit("/", 1)[1][:-5].rsplit("-", 2)
    for r in json.load(open(path))["runs"]:
        tp.setdefault((preset, r["mutex"], mode), []).append(r["throughput_per_ms"])
head = "| preset | mutex | n | off (acq/ms) | on (acq/ms) | on / off |" + (" before hooks (acq/ms) | off / before |" if "base" in modes else "")
print(head)
print("|" + "---|" * (head.count("|") - 1))
ratios = []
for preset in ("hot-handover", "default"):
    for mutex in sorted({k[1] for k in tp if k[0] == preset}):
        off, on = tp.get((preset, mutex, "off"), []), tp.get((preset, mutex, "on"), [])
        if not off or not on:
            continue
        m_off, m_on = statistics.median(off), statistics.median(on)
        ratios.append(m_on / m_off)
        line = f"| {preset} | {mutex} | {min(len(off), len(on))} | {m_off:.1f} | {m_on:.1f} | {m_on / m_off:.3f} |"
        if "base" in modes and tp.get((preset, mutex, "base")):
            m_base = statistics.median(tp[(preset, mutex, "base")])
            line += f" {m_base:.1f} | {m_off / m_base:.3f} |"
        print(line)
print(f"\ngeometric mean of on/off: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
EOF
