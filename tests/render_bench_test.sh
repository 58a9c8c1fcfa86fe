#!/bin/bash
# Renders a committed strata-bench report and checks what the markdown must say: the ratio
# strata-bench computed for the ingest rate, the digest agreement, every system's figure; and,
# where matplotlib is installed, that the plots were written. Usage: render_bench_test.sh SRC_DIR
set -euo pipefail
src=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" "$src/scripts/render_bench.py" "$src/docs/bench-ingest_large-4885256.json" "$out" 2>"$out/err"
md="$out/bench-ingest_large-4885256.md"
fail() { echo "FAIL: $*"; cat "$md"; exit 1; }
grep -q '^| threads=2, batch=1024, wal=off | edges_per_s | 263K | 128K |  | 2.06x |  |$' "$md" || fail "ingest_large ratio row"
for w in bfs pr sssp wcc; do
  grep -q "^| $w | [^|]* | yes |" "$md" || fail "digest agreement of $w"
done
grep -q '^| ingest_large | csr | 180.4 | True |$' "$md" || fail "jobs table"
grep -q '^| ingest_large strata peak RSS / memory budget | <= 1x | 0.89x | met | peak 453 MiB' "$md" \
  || fail "ingest_large peak RSS against the budget"
if "$PY" -c 'import matplotlib' 2>/dev/null; then
  for p in ingest latency analytics; do
    [[ -s "$out/bench-ingest_large-4885256-$p.png" ]] || fail "plot $p missing"
  done
fi
echo "render_bench ok"
