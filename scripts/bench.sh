#!/usr/bin/env bash
# make bench: run the quick benchmark suite and render it into bench-out/ (gitignored).
#
#   scripts/bench.sh                 # quick suite -> bench-out/quick.{json,md,*.png}
#   SUITE=full scripts/bench.sh      # full suite  -> bench-out/full.{json,md,*.png}
#   BUILD=build-bench scripts/bench.sh
#
# Extra arguments go to strata-bench (e.g. --only pr,bfs --systems strata-mem,csr).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
SUITE=${SUITE:-quick}
BIN="$BUILD/bin/strata-bench"
OUT=bench-out
if [[ ! -x "$BIN" ]]; then
  echo "bench.sh: $BIN is missing; run 'make build' first" >&2
  exit 1
fi
mkdir -p "$OUT"

echo "bench.sh: $BIN --suite $SUITE --json $OUT/$SUITE.json $*" >&2
"$BIN" --suite "$SUITE" --json "$OUT/$SUITE.json" --dir "$OUT/data" "$@"

# Debian's python3 has python3-matplotlib; a pyenv/virtualenv python3 first on PATH may not.
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" scripts/render_bench.py "$OUT/$SUITE.json" "$OUT"
echo "bench.sh: report in $OUT/$SUITE.md" >&2
