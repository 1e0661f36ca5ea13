#!/usr/bin/env bash
# Installs what the build and tests need when it is missing: cmake, gfortran, doctest, pkg-config
# (Debian packages). Rust comes with the machine. Safe to run any number of times.
set -euo pipefail

need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v gfortran >/dev/null 2>&1 || need+=(gfortran)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -f /usr/include/doctest/doctest.h ] || need+=(doctest-dev)
for extra in "$@"; do
  dpkg -s "$extra" >/dev/null 2>&1 || need+=("$extra")
done

if [ ${#need[@]} -gt 0 ]; then
  echo "ensure-deps: installing ${need[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
