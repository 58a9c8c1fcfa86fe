#!/usr/bin/env bash
# The StrataGraph demo (`make demo`, after `make build`): generate a Graph500 Kronecker graph
# larger than the store's memory budget, ingest it with the progress display, compact, run
# PageRank, BFS and WCC on the persisted graph, and print a short summary.
#
# Knobs (environment): DEMO_SCALE (20), DEMO_EDGE_FACTOR (16), DEMO_BUDGET (48M),
# DEMO_MEMGRAPH (16M), DEMO_DIR (./demo-data), BUILD (build).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/${BUILD:-build}/bin/strata"
SCALE="${DEMO_SCALE:-20}"
EDGE_FACTOR="${DEMO_EDGE_FACTOR:-16}"
BUDGET="${DEMO_BUDGET:-48M}"
MEMGRAPH="${DEMO_MEMGRAPH:-16M}"
DATA="${DEMO_DIR:-$ROOT/demo-data}"
STORE="$DATA/store"
EDGES="$DATA/kron-$SCALE-$EDGE_FACTOR.el"

if [[ ! -x "$BIN" ]]; then
  echo "demo: $BIN not found; run 'make build' first" >&2
  exit 1
fi

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Seconds since the epoch with a fraction, for wall-clock timings.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The progress lines of ingest go through tee below: ask for them when stderr is a terminal.
PROGRESS=never
if [[ -t 2 ]]; then PROGRESS=always; fi

T0="$(now)"
mkdir -p "$DATA"
rm -rf "$STORE" "$DATA"/*.out "$DATA"/*.log

step "1. Generate a Graph500 Kronecker graph: scale $SCALE, edge factor $EDGE_FACTOR"
if [[ ! -s "$EDGES" ]]; then
  "$BIN" generate --kind kron --scale "$SCALE" --edge-factor "$EDGE_FACTOR" --seed 1 \
    --format el --out "$EDGES.tmp" --progress "$PROGRESS"
  mv "$EDGES.tmp" "$EDGES"
else
  echo "reusing $EDGES"
fi
INPUT_BYTES="$(stat -c %s "$EDGES")"
echo "input: $(numfmt --to=iec "$INPUT_BYTES") of text; the store may use $BUDGET of memory" \
  "(in-memory tier $MEMGRAPH, one more sealed while it flushes)"

step "2. Ingest (memory budget $BUDGET: the graph does not fit; memgraphs flush to disk)"
"$BIN" ingest --db "$STORE" --input "$EDGES" --format el --directed \
  --memory-budget "$BUDGET" --memgraph-bytes "$MEMGRAPH" --wal group --progress "$PROGRESS" 2>&1 |
  tee "$DATA/ingest.log"

step "3. Compact"
if "$BIN" compact --db "$STORE" 2> "$DATA/compact.log"; then
  cat "$DATA/compact.log"
  COMPACTED="yes"
elif grep -q "NotSupported" "$DATA/compact.log"; then
  cat "$DATA/compact.log"
  echo "compaction is not available in this build: continuing with the level-0 layout"
  COMPACTED="not supported"
else
  cat "$DATA/compact.log" >&2
  exit 1
fi
"$BIN" inspect --db "$STORE" | tee "$DATA/inspect.log"

step "4. Analytics on the persisted graph"
"$BIN" analyze --db "$STORE" --algo pr --out "$DATA/pr.out" 2>&1 | tee "$DATA/pr.log"
# BFS from the vertex PageRank ranks first (it exists and reaches most of the graph).
SOURCE="$(awk 'NR == 1 || $2 > best { best = $2; v = $1 } END { print v }' "$DATA/pr.out")"
"$BIN" analyze --db "$STORE" --algo bfs --source "$SOURCE" --out "$DATA/bfs.out" 2>&1 |
  tee "$DATA/bfs.log"
"$BIN" analyze --db "$STORE" --algo wcc --out "$DATA/wcc.out" 2>&1 | tee "$DATA/wcc.log"
"$BIN" verify --db "$STORE" | tee "$DATA/verify.log"

# ---- Summary.
kernel() { sed -n 's/.*kernel \([0-9.]* [a-z]*\).*/\1/p' "$1" | awk 'NR == 1'; }
INGEST_LINE="$(tr '\r' '\n' < "$DATA/ingest.log" | grep '^ingested' | awk 'END { print }')"
RATE="$(sed -n 's/.*: \([0-9.]*[KMG]*\) edges\/s.*/\1/p' <<< "$INGEST_LINE")"
INGEST_TIME="$(sed -n 's/.* in \([0-9.]* [a-z]*\): .*/\1/p' <<< "$INGEST_LINE")"
DISK_BYTES="$(du -sb "$STORE" | cut -f1)"
# Distinct stored edges (duplicates in the input are one edge): a scan of the snapshot.
ENTRIES="$("$BIN" analyze --db "$STORE" --algo scan -q | awk '$1 == "edges" { print $2 }')"
LEVELS="$(grep -E '^level [0-9]+:' "$DATA/inspect.log" | sed 's/^/    /')"
REACHED="$(sed -n 's/.*reached \([0-9]*\), depth \([0-9]*\).*/\1 vertices, depth \2/p' "$DATA/bfs.log")"
COMPONENTS="$(sed -n 's/.*; \([0-9]*\) components.*/\1/p' "$DATA/wcc.log")"

step "Summary"
cat <<EOF
  graph         Kronecker scale $SCALE, edge factor $EDGE_FACTOR: $(awk -v m=$((EDGE_FACTOR << SCALE)) 'BEGIN { printf "%.1fM", m / 1e6 }') edges generated, $(numfmt --to=iec "$INPUT_BYTES") of text
  memory budget $BUDGET (memgraph $MEMGRAPH)
  ingest        $INGEST_TIME, $RATE edges/s (batches of 16384, group-commit WAL)
  on disk       $(numfmt --to=iec "$DISK_BYTES"), $(awk -v d="$DISK_BYTES" -v e="$ENTRIES" 'BEGIN { printf "%.2f", e ? d / e : 0 }') bytes per stored edge ($ENTRIES distinct edges)
  compaction    $COMPACTED
  level layout
$LEVELS
  PageRank      $(kernel "$DATA/pr.log") (10 iterations, damping 0.85)
  BFS           $(kernel "$DATA/bfs.log") from vertex $SOURCE: reached $REACHED
  WCC           $(kernel "$DATA/wcc.log"): $COMPONENTS components
  top 5 vertices by PageRank:
$(sort -k2,2 -g -r "$DATA/pr.out" | awk 'NR <= 5 { printf "    %-10s %s\n", $1, $2 }')
  results       $DATA/{pr,bfs,wcc}.out
  total         $(elapsed "$T0") s
EOF
