#!/usr/bin/env bash
# Installs the Debian packages StrataGraph builds, tests and benchmarks with. Idempotent: does
# nothing (and needs no network) when everything is already installed.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build ccache pkg-config
  liburing-dev libxxhash-dev libjemalloc-dev libtbb-dev
  libgtest-dev libgmock-dev libbenchmark-dev librocksdb-dev libcli11-dev
  python3 python3-matplotlib
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
