#!/usr/bin/env bash
# The tests must pass from a plain clone: nothing the build or the tests read may live outside
# the repository (e.g. the ../shared folder a development checkout happens to have beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
if hits=$(git grep -n -E '\.\./shared|STRATA_SHARED_DIR' -- CMakeLists.txt Makefile '*.cmake' \
            'tests/*' 'scripts/*' '.ci/*' ':!scripts/check-self-contained.sh'); then
  echo "check-self-contained: these lines reach outside the repository:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "check-self-contained: ok"
