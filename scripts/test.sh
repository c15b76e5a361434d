#!/usr/bin/env bash
# test.sh: builds and runs every test of fibersync: C++ (plain, then the
# OS-thread paths under ThreadSanitizer and AddressSanitizer+UBSan), Java
# (mvn verify on JDK 25) and Python (the report tool). Installs missing
# dependencies first. Exit code 0 only if every suite passed.
#   FIBERSYNC_TEST_SCALE   lengthens (>1) or shortens (<1) the stress tests
#   FIBERSYNC_SKIP_JAVA=1  skip the Java suite (it is reported as skipped)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=deps.sh
source scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

passed=0
failed=0
failed_names=()
step() {  # step NAME COMMAND...: runs one suite, records its verdict
  local name=$1
  shift
  echo
  echo "=== $name ==="
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "=== $name: passed ($((SECONDS - start)) s) ==="
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    echo "=== $name: FAILED ($((SECONDS - start)) s) ==="
  fi
}

cpp_suite() {  # cpp_suite BUILD_DIR SANITIZER SCALE
  local dir=$1 sanitizer=$2 scale=$3
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFIBERSYNC_SANITIZER="$sanitizer" >/dev/null &&
    cmake --build "$dir" -j"$jobs" &&
    (cd "$dir" && FIBERSYNC_TEST_SCALE="$scale" ctest -j"$jobs" --timeout 600 --output-on-failure)
}

java_suite() {
  fibersync_deps java || return 1
  local rc=0
  JAVA_HOME="$FIBERSYNC_JDK25" mvn -B -q -Dstyle.color=never -f java/pom.xml verify || rc=$?
  echo  # mvn -q leaves the last line open
  return $rc
}

python_suite() {
  fibersync_deps python && fibersync_deps browser || return 1
  .venv/bin/pytest -q tools/report/tests
}

step "dependencies (C++)" fibersync_deps cpp
step "C++ tests" cpp_suite build/test none "${FIBERSYNC_TEST_SCALE:-1}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
export ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
step "C++ tests under ThreadSanitizer (OS-thread paths)" cpp_suite build/tsan thread 0.1
step "C++ tests under AddressSanitizer+UBSan (OS-thread paths)" cpp_suite build/asan address 0.1
if [ -f java/pom.xml ]; then
  if [ "${FIBERSYNC_SKIP_JAVA:-0}" = 1 ]; then
    echo "=== Java tests: SKIPPED (FIBERSYNC_SKIP_JAVA=1) ==="
  else
    step "Java tests (mvn verify)" java_suite
  fi
fi
if [ -d tools/report/tests ]; then
  step "Python tests (report tool)" python_suite
fi

echo
[ ${#failed_names[@]} -gt 0 ] && printf 'failed suite: %s\n' "${failed_names[@]}"
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
