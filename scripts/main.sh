#!/usr/bin/env bash
# main.sh: the main job. Builds fibersync (Release), runs the benchmark
# harness on its default preset (or the preset/flags given), writes the
# results under results/ and the HTML report under report/, and prints the
# report's path. Installs missing dependencies first.
#   bash scripts/main.sh                       # default preset, ~2 minutes on 2 cores
#   bash scripts/main.sh --preset hot-handover # any fibersync-bench flags
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=deps.sh
source scripts/deps.sh
fibersync_deps cpp
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFIBERSYNC_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$jobs" >&2

bench=build/release/bench/fibersync-bench
if [ ! -x "$bench" ]; then
  echo "fibersync: the benchmark harness is not built; running the example instead" >&2
  exec build/release/examples/01_lock_guard_fibers
fi

mkdir -p results
csv="$("$bench" "$@" | tail -n 1)"
echo "results: $csv" >&2

if [ -d tools/report ]; then
  fibersync_deps python
  report_dir="report/$(basename "${csv%.csv}")"
  .venv/bin/fibersync-report html "${csv%.csv}.json" -o "$report_dir"
else
  echo "$csv"
fi
