#!/bin/bash
# strata-bench's paired PageRank row (RunPrPaired): strata-mem and the CSR of the same graph,
# five pairs alternated in one process. Checks that the row is there with five ratios, that
# each ratio is the pair's times divided, and that the two kernels' rank digests agree (the
# CSR was built from the same final graph). The digest is the top vertex and its rank to three
# digits: a CSR of half the stream fails it (tried), one without the few deletions at this
# scale does not. Then the same with --pr-cache-bytes 0 (strata's PageRank streams every list):
# strata-mem's rows carry cache_bytes 0, the CSR's none, and the digests still agree; the
# rows' info says what the kernel's list cache had (by default a budget of at least 256 MiB
# that kept the lists; with 0, nothing); a
# --pr-cache-bytes that is not a size is refused, naming the option. Then with --pr-packing
# always: the rows carry packing "always", the cache kept its block packed, the digests still
# agree (by default nothing is packed: the lists fit); a --pr-packing that is not auto, never
# or always is refused, naming the option. Usage: pr_paired_test.sh STRATA_BENCH
set -euo pipefail
bench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
check() {  # check JSON [CACHE_BYTES|-] [PACKING]
"$PY" - "$@" <<'PYEOF'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
cache = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else None
packing = sys.argv[3] if len(sys.argv) > 3 else None
rs = d["results"] if isinstance(d, dict) else d
rows = [r for r in rs if r["workload"] == "pr" and r["metric"] == "seconds_ratio_paired"]
assert len(rows) == 1, "want one paired row, got %d" % len(rows)
r = rows[0]
info = r["params"]["info"]
assert r["system"] == "strata-mem" and r["params"]["baseline"] == "csr", r["params"]
assert info["pairs"] == 5 and len(info["ratios"]) == 5, info
for a, b, q in zip(info["seconds"], info["csr_seconds"], info["ratios"]):
    assert a > 0 and b > 0 and abs(a / b - q) <= 1e-3 * q, (a, b, q)
assert abs(r["value"] - statistics.median(info["ratios"])) <= 1e-3 * r["value"], r["value"]
assert info["digests_match"] is True, "strata-mem and the CSR ranked differently"
pr_rows = [x for x in rs if x["workload"] == "pr" and x["system"] == "strata-mem"]
assert len(pr_rows) >= 2, "want the pr row and the paired row"
for x in pr_rows:
    assert x["params"].get("cache_bytes") == cache, (x["metric"], x["params"].get("cache_bytes"))
    assert x["params"].get("packing") == packing, (x["metric"], x["params"].get("packing"))
    if x["metric"] not in ("seconds", "seconds_ratio_paired"):
        continue
    # What the kernel's list cache had: by default a budget of at least 256 MiB, in which a
    # scale-12 graph's lists all fit; with --pr-cache-bytes 0, nothing.
    xi = x["params"]["info"]
    budget, kept = xi["list_cache_budget"], xi["list_cache_bytes"]
    if cache is None:
        assert budget >= 256 << 20 and kept > 0, (x["metric"], budget, kept)
    else:
        assert budget == cache and kept == 0, (x["metric"], budget, kept)
    packed = xi["list_cache_packed_blocks"]
    assert packed == (1 if packing == "always" else 0), (x["metric"], packing, packed)
csr_rows = [x for x in rs if x["workload"] == "pr" and x["system"] == "csr"]
assert all("cache_bytes" not in x["params"] for x in csr_rows), csr_rows
assert cache is None or csr_rows, "the cache run includes the csr system"
print("pr paired ok: %.2fx (cache %s, packing %s)" % (r["value"], cache, packing))
PYEOF
}
"$bench" --suite quick --scale 12 --only pr --systems strata-mem --json "$dir/r.json" \
  --dir "$dir/d" >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
check "$dir/r.json"
"$bench" --suite quick --scale 12 --only pr --systems strata-mem,csr --json "$dir/r0.json" \
  --dir "$dir/d0" --pr-cache-bytes 0 >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
check "$dir/r0.json" 0
if "$bench" --suite quick --only pr --json "$dir/x.json" --pr-cache-bytes 12x >"$dir/log" 2>&1; then
  echo "--pr-cache-bytes 12x was accepted"; exit 1
fi
grep -q -- "--pr-cache-bytes: .*12x" "$dir/log" || { cat "$dir/log"; exit 1; }
echo "bad --pr-cache-bytes refused"
"$bench" --suite quick --scale 12 --only pr --systems strata-mem,csr --json "$dir/rp.json" \
  --dir "$dir/dp" --pr-packing always >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
check "$dir/rp.json" - always
if "$bench" --suite quick --only pr --json "$dir/x.json" --pr-packing often >"$dir/log" 2>&1; then
  echo "--pr-packing often was accepted"; exit 1
fi
grep -q -- "--pr-packing: 'often'" "$dir/log" || { cat "$dir/log"; exit 1; }
echo "bad --pr-packing refused"
# --pr-group-by-degree: the strata rows and the paired row carry it; a value other than on or
# off is refused, naming the option.
"$bench" --suite quick --scale 12 --only pr --systems strata-mem,csr --json "$dir/rg.json" \
  --dir "$dir/dg" --pr-group-by-degree on >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
python3 - "$dir/rg.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"]
        if r["workload"] == "pr" and r["system"] == "strata-mem"]
assert rows, "no strata-mem pr rows"
for r in rows:
    assert r["params"].get("group_by_degree") == "on", (r["metric"], r["params"])
print("pr rows carry group_by_degree on")
PY
if "$bench" --suite quick --only pr --json "$dir/x.json" --pr-group-by-degree yes >"$dir/log" 2>&1; then
  echo "--pr-group-by-degree yes was accepted"; exit 1
fi
grep -q -- "--pr-group-by-degree: 'yes'" "$dir/log" || { cat "$dir/log"; exit 1; }
echo "bad --pr-group-by-degree refused"
