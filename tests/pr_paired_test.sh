#!/bin/bash
# strata-bench's paired PageRank row (RunPrPaired): strata-mem and the CSR of the same graph,
# five pairs alternated in one process. Checks that the row is there with five ratios, that
# each ratio is the pair's times divided, and that the two kernels' rank digests agree (the
# CSR was built from the same final graph). The digest is the top vertex and its rank to three
# digits: a CSR of half the stream fails it (tried), one without the few deletions at this
# scale does not. Usage: pr_paired_test.sh STRATA_BENCH
set -euo pipefail
bench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bench" --suite quick --scale 12 --only pr --systems strata-mem --json "$dir/r.json" \
  --dir "$dir/d" >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
"$PY" - "$dir/r.json" <<'PYEOF'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in (d["results"] if isinstance(d, dict) else d)
        if r["workload"] == "pr" and r["metric"] == "seconds_ratio_paired"]
assert len(rows) == 1, "want one paired row, got %d" % len(rows)
r = rows[0]
info = r["params"]["info"]
assert r["system"] == "strata-mem" and r["params"]["baseline"] == "csr", r["params"]
assert info["pairs"] == 5 and len(info["ratios"]) == 5, info
for a, b, q in zip(info["seconds"], info["csr_seconds"], info["ratios"]):
    assert a > 0 and b > 0 and abs(a / b - q) <= 1e-3 * q, (a, b, q)
assert abs(r["value"] - statistics.median(info["ratios"])) <= 1e-3 * r["value"], r["value"]
assert info["digests_match"] is True, "strata-mem and the CSR ranked differently"
print("pr paired ok: %.2fx" % r["value"])
PYEOF
