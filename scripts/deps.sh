#!/usr/bin/env bash
# deps.sh: installs what fibersync's build, tests and report need, only when
# missing. Sourced by scripts/main.sh and scripts/test.sh.
#   fibersync_deps cpp      C++ toolchain and libraries (Debian packages)
#   fibersync_deps python   a virtual environment .venv with the report tool
#   fibersync_deps java     Maven (Debian) and a JDK 25 (must already be present)
#   fibersync_deps browser  Chromium, for the report's rendering test

fibersync_apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "fibersync: installing Debian packages: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
      "${missing[@]}" >&2
}

fibersync_find_jdk25() {
  local candidates=("${JAVA25_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk-arm64)
  candidates+=(/usr/lib/jvm/*25*)
  for c in "${candidates[@]}"; do
    if [ -n "$c" ] && [ -x "$c/bin/javac" ] && "$c/bin/java" -version 2>&1 | grep -qE 'version "25'; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

fibersync_deps() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  case "$1" in
    cpp)
      fibersync_apt_install build-essential cmake ninja-build pkg-config git \
        libboost-fiber-dev libboost-context-dev libgtest-dev \
        nlohmann-json3-dev libcli11-dev libfmt-dev libhwloc-dev
      ;;
    python)
      if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        fibersync_apt_install python3 python3-venv python3-pip
      fi
      if [ ! -x "$root/.venv/bin/pip" ]; then
        python3 -m venv "$root/.venv" || return 1
      fi
      if [ -d "$root/tools/report" ]; then
        "$root/.venv/bin/pip" install -q --disable-pip-version-check -e "$root/tools/report[test]" >&2 || return 1
      fi
      ;;
    java)
      fibersync_apt_install maven || return 1
      if ! FIBERSYNC_JDK25="$(fibersync_find_jdk25)"; then
        echo "fibersync: error: JDK 25 not found (looked in \$JAVA25_HOME and /usr/lib/jvm); java/ needs it" >&2
        return 1
      fi
      export FIBERSYNC_JDK25
      ;;
    browser)
      command -v chromium >/dev/null 2>&1 || fibersync_apt_install chromium
      ;;
  esac
}
