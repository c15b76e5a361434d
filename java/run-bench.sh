#!/usr/bin/env bash
# Runs the fibersync JMH harness on a JSON config and writes the CSV.
#
#   java/run-bench.sh [CONFIG.json | preset:NAME] [--out FILE.csv] [--jmh-log FILE] [--dry-run]
#
# CONFIG defaults to the short preset "default" (about 2 minutes on 2 cores);
# presets: default, high-contention, high-contention-long, low-contention,
# text-stats (files under
# java/bench/src/main/resources/presets/). --out defaults to
# results/java/<timestamp>.csv under the repository root. Exit status: 0 done,
# 1 some run failed, 2 bad input (one line on stderr, no result file).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

die() { echo "run-bench: error: $*" >&2; exit 2; }

# JDK 25, whatever `java` on PATH is.
if [[ -z "${JAVA_HOME:-}" ]]; then
  if [[ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]]; then
    JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
  else
    die "JDK 25 not found: set JAVA_HOME to a JDK 25 (default /usr/lib/jvm/temurin-25-jdk-amd64 is absent)"
  fi
fi
java="$JAVA_HOME/bin/java"
[[ -x "$java" ]] || die "JAVA_HOME=$JAVA_HOME has no bin/java"
major="$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
[[ "${major:-0}" =~ ^[0-9]+$ && "$major" -ge 25 ]] || die "JAVA_HOME=$JAVA_HOME is JDK ${major:-?}; JDK 25 or newer is needed"
export JAVA_HOME

# Arguments: check the config and the output path here as well, so that bad
# input fails before a (possibly slow) build.
args=()
config=""
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || die "--out needs a file name"; out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    --jmh-log|--dry-run|-h|--help)
      if [[ "$1" == --jmh-log ]]; then [[ $# -ge 2 ]] || die "--jmh-log needs a file name"; args+=("$1" "$2"); shift 2
      else args+=("$1"); shift; fi ;;
    -*) die "unknown option $1 (usage: run-bench.sh [CONFIG.json | preset:NAME] [--out FILE.csv] [--jmh-log FILE] [--dry-run])" ;;
    *) [[ -z "$config" ]] || die "more than one config given"; config="$1"; shift ;;
  esac
done
config="${config:-preset:default}"
if [[ "$config" != preset:* ]]; then
  [[ -f "$config" ]] || die "$config: no such file"
  config="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"
fi
if [[ -z "$out" ]]; then
  out="$root/results/java/$(date +%Y%m%d-%H%M%S).csv"
elif [[ "$out" != /* ]]; then
  out="$PWD/$out"
fi

# Build the bench jar when it is missing or older than any source or POM.
jar="$here/bench/target/fibersync-bench.jar"
if [[ ! -f "$jar" ]] || [[ -n "$(find "$here/pom.xml" "$here/locks/pom.xml" "$here/bench/pom.xml" \
      "$here/locks/src/main" "$here/bench/src/main" -newer "$jar" -type f -print -quit)" ]]; then
  echo "run-bench: building $jar (mvn package, tests skipped) ..." >&2
  mvn -B -q -f "$here/pom.xml" -DskipTests package >&2 || { echo "run-bench: error: build failed" >&2; exit 1; }
fi

echo "run-bench: $java -jar $jar $config --out $out ${args[*]:-}" >&2
echo "run-bench: load: $(uptime)" >&2
cd "$root"
exec "$java" --enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
  -jar "$jar" "$config" --out "$out" "${args[@]}"
