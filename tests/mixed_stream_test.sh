#!/bin/bash
# strata-bench's mixed job: its writers insert new edges. Each writer row (alone, beside the
# readers, beside the CSR control) lists, per round and writer, the range [first, end) of
# stream steps it applied; over all rows each writer's ranges must tile [0, N) with no overlap
# (each phase goes on where that writer's last one stopped, never back to the stream's start),
# and each row's ops must be its ranges' sum. Until 3b3754e every phase started over at 0, so
# after the first phase the writers put edges the store already held. Usage:
# mixed_stream_test.sh STRATA_BENCH
set -euo pipefail
bench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$bench" --suite quick --scale 12 --only mixed --systems strata-mem --json "$dir/r.json" \
  --dir "$dir/d" >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
"$PY" - "$dir/r.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
rs = d["results"] if isinstance(d, dict) else d
rows = [r for r in rs if r["workload"] == "mixed" and r["metric"] == "ops_per_s"
        and r["system"] == "strata-mem"]
kinds = sorted((r["params"]["readers"], r["params"].get("reader", "")) for r in rows)
assert kinds == [(0, ""), (1, ""), (1, "csr")], kinds
by_writer = {}
for r in rows:
    info = r["params"]["info"]
    ranges = info["stream_ranges"]
    assert ranges, r["params"]
    assert info["ops"] == sum(e - f for _, f, e in ranges), (info["ops"], ranges)
    for t, f, e in ranges:
        # A phase beside a scale-12 reader may end before its writer applied anything (CI
        # once had one): empty, it must still begin where the last one stopped.
        assert e >= f, ("a phase ended before it began", t, f, e)
        by_writer.setdefault(t, []).append((f, e))
for t, rr in by_writer.items():
    rr.sort()
    at = 0
    for f, e in rr:
        assert f == at, ("writer %d: a phase began at step %d, not where the last stopped (%d)"
                         % (t, f, at))
        at = e
    # The writers alone run at least 0.5 s a round: phases that begin past 0 are checked.
    busy = sum(1 for f, e in rr if e > f)
    assert busy >= 2, ("writer %d: fewer than two phases applied anything" % t, rr)
    print("writer %d: %d phases (%d applied something), steps [0, %d) each applied once"
          % (t, len(rr), busy, at))
PYEOF
