#!/bin/bash
# scripts/ab_bench.py against two fake strata-bench binaries: runs alternate (a, b, a, b), each
# run's figures are parsed from the fill output or the JSON report, the medians are those of
# the runs, and a failing binary stops the comparison with its exit code named.
# Usage: ab_bench_test.sh SRC_DIR
set -euo pipefail
src=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3
fail() { echo "FAIL: $*"; cat "$t/log" 2>/dev/null || true; exit 1; }

# A fake binary: logs its name, then prints ten tenths (fill) or writes a JSON report whose
# update load rate is RATE x (number of runs so far of this binary).
make_fake() {
  local name=$1 rate=$2
  cat > "$t/$name" <<FAKE
#!/bin/bash
echo $name >> "$t/order"
n=\$(grep -c "^$name\$" "$t/order")
if [[ \$1 == fill ]]; then
  for k in 0 1 2 3 4 5 6 7 8 9; do
    echo "  tenth \$k:     \$(( $rate * (10 - k) )) K edges/s (1.00 s, cpu 1.50 s)"
  done
  exit 0
fi
while [[ \$# -gt 0 && \$1 != --json ]]; do shift; done
cat > "\$2" <<JSON
{"results": [{"workload": "update", "system": "strata-mem", "metric": "edges_per_s",
  "value": \$(( $rate * 1000 * n * n )), "unit": "edges/s",
  "params": {"phase": "load", "info": {"cpu_seconds": 10.0,
  "engine": "rebuilt=2000000"}}}]}
JSON
FAKE
  chmod +x "$t/$name"
}
make_fake fa 100
make_fake fb 200

"$PY" "$src/scripts/ab_bench.py" --rounds 3 --dir "$t/out" update "$t/fa" "$t/fb" > "$t/log"
[[ "$(tr '\n' ' ' < "$t/order")" == "fa fb fa fb fa fb " ]] || fail "runs not alternated"
# fa's rates 100, 400, 900 K: median 400 (mean 467); fb's 200, 800, 1800: median 800.
grep -q "^  fa  *load_K 400.00  cpu_s 10.00  rebuilt_M 2.00$" "$t/log" || fail "fa's medians"
grep -q "^  fb  *load_K 800.00  cpu_s 10.00  rebuilt_M 2.00$" "$t/log" || fail "fb's medians"

rm -f "$t/order"
"$PY" "$src/scripts/ab_bench.py" --rounds 1 --dir "$t/out" fill "$t/fa" > "$t/log"
# Tenths 1000 .. 100 K edges/s, 1.5 CPU s each.
grep -q "cpu_s 15.00  first_cpu_s 1.50  last_cpu_s 1.50  first_K 1000.00  last_K 100.00  last/first 0.10" \
  "$t/log" || fail "fill figures"

printf '#!/bin/bash\necho broken; exit 3\n' > "$t/fc"
chmod +x "$t/fc"
if "$PY" "$src/scripts/ab_bench.py" --rounds 1 --dir "$t/out" fill "$t/fc" > "$t/log" 2>&1; then
  fail "a failing binary was not reported"
fi
grep -q "fc failed (exit 3)" "$t/log" || fail "failure message"
echo "ab_bench ok"
