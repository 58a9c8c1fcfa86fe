#!/usr/bin/env bash
# Installs the Debian packages StrataGraph builds, tests and benchmarks with, and the Python packages
# of its Python suite (pip, into the python3 on PATH).
# Idempotent: does nothing (and needs no network) when everything is already installed.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build ccache pkg-config
  liburing-dev libxxhash-dev libjemalloc-dev libtbb-dev
  libgtest-dev libgmock-dev libbenchmark-dev librocksdb-dev libcli11-dev
  python3 python3-matplotlib python3-dev pybind11-dev
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python package's test suite (python/tests) and `pip install .` need these in the python3
# first on PATH: the interpreter CMake builds the extension for and `make test` runs pytest with.
if ! python3 -c "import numpy, networkx, pytest, scikit_build_core" 2>/dev/null; then
  echo "install-deps: pip installing numpy networkx pytest scikit-build-core"
  python3 -m pip install --quiet --disable-pip-version-check numpy networkx pytest scikit-build-core
fi
