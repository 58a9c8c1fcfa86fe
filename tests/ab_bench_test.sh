#!/bin/bash
# scripts/ab_bench.py against two fake strata-bench binaries: runs alternate (a, b, a, b), each
# run's figures are parsed from the fill output or the JSON report (each mode's rows, not the
# rows beside them), the medians are those of the runs, and a failing binary stops the
# comparison with its exit code named.
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
only=
while [[ \$# -gt 0 && \$1 != --json ]]; do
  [[ \$1 == --only ]] && only=\$2
  shift
done
case \$only in
insert)  # rates in K edges/s: single 1 writer RATE, 2 writers 2 RATE; batched 3x, 2 writers 4.5x
  cat > "\$2" <<JSON
{"results": [
 {"workload": "insert", "system": "strata-mem", "metric": "edges_per_s", "value": \$(( $rate * 1000 )),
  "params": {"batch": 1, "threads": 1, "wal": "off"}},
 {"workload": "insert", "system": "strata-mem", "metric": "edges_per_s", "value": \$(( $rate * 2000 )),
  "params": {"batch": 1, "threads": 2, "wal": "off"}},
 {"workload": "insert", "system": "strata-mem", "metric": "edges_per_s", "value": \$(( $rate * 3000 )),
  "params": {"batch": 1024, "threads": 1, "wal": "off"}},
 {"workload": "insert", "system": "strata-mem", "metric": "edges_per_s", "value": 1,
  "params": {"batch": 1024, "threads": 1, "wal": "on"}},
 {"workload": "insert", "system": "strata-mem", "metric": "edges_per_s", "value": \$(( $rate * 4500 )),
  "params": {"batch": 1024, "threads": 2, "wal": "off"}}]}
JSON
  ;;
pr)  # strata-mem 0.6 s (0.2 + 0.4), the CSR 0.4 s, paired 1.4
  cat > "\$2" <<JSON
{"results": [
 {"workload": "pr", "system": "strata-mem", "metric": "seconds", "value": 0.6,
  "params": {"graph": "main", "info": {"prepare_seconds_median": 0.2, "iterate_seconds_median": 0.4}}},
 {"workload": "pr", "system": "csr", "metric": "seconds", "value": 0.4, "params": {"graph": "main"}},
 {"workload": "pr", "system": "strata-mem", "metric": "seconds_ratio_paired", "value": 1.4,
  "params": {"graph": "main"}},
 {"workload": "pr", "system": "strata-mem", "metric": "seconds", "value": 9.0,
  "params": {"graph": "ingest_large"}}]}
JSON
  ;;
mixed)  # peak 2 GiB over a 1-GiB graph; writer 0.8 of alone; reader 1.1x; a CSR control apart
  cat > "\$2" <<JSON
{"results": [
 {"workload": "mixed", "system": "strata-mem", "metric": "peak_rss_bytes", "value": 2147483648,
  "params": {"readers": 1, "writers": 1, "info": {"memory_bytes_before": 1073741824}}},
 {"workload": "mixed", "system": "strata-mem", "metric": "ops_per_s", "value": 500,
  "params": {"role": "writer", "readers": 0, "writers": 1}},
 {"workload": "mixed", "system": "strata-mem", "metric": "ops_per_s", "value": 400,
  "params": {"role": "writer", "readers": 1, "writers": 1}},
 {"workload": "mixed", "system": "strata-mem", "metric": "ops_per_s", "value": 100,
  "params": {"role": "writer", "readers": 1, "writers": 1, "reader": "csr"}},
 {"workload": "mixed", "system": "strata-mem", "metric": "seconds", "value": 10.0,
  "params": {"role": "reader", "readers": 1, "writers": 0}},
 {"workload": "mixed", "system": "strata-mem", "metric": "seconds", "value": 11.0,
  "params": {"role": "reader", "readers": 1, "writers": 1}}]}
JSON
  ;;
*)
  cat > "\$2" <<JSON
{"results": [{"workload": "update", "system": "strata-mem", "metric": "edges_per_s",
  "value": \$(( $rate * 1000 * n * n )), "unit": "edges/s",
  "params": {"phase": "load", "info": {"cpu_seconds": 10.0,
  "engine": "rebuilt=2000000"}}}]}
JSON
esac
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

# One round of MODE on fa; its medians line must end with FIGURES.
one_round() {
  local mode=$1 figures=$2
  "$PY" "$src/scripts/ab_bench.py" --rounds 1 --dir "$t/out" "$mode" "$t/fa" > "$t/log"
  grep -q -- "$figures\$" "$t/log" || fail "$mode figures"
}
rm -f "$t/order"
# Tenths 1000 .. 100 K edges/s, 1.5 CPU s each.
one_round fill "cpu_s 15.00  first_cpu_s 1.50  last_cpu_s 1.50  first_K 1000.00  last_K 100.00  last/first 0.10"
# The modes read from JSON rows other than the update load's: the rows each names, no others
# (a WAL-on insert row, another graph's PageRank, the mixed job's CSR control are ignored).
one_round insert "single_1w_K 100.00  single_2w_K 200.00  batch_1w_K 300.00  batch_2w_K 450.00  batch/single 3.00  2w/1w_batch 1.50"
one_round pr "strata-mem_s 0.60  prepare_s 0.20  iterate_s 0.40  csr_s 0.40  paired 1.40  separate 1.50"
one_round mixed22 "peak_MiB 2048.00  peak/graph 2.00  writer_with/alone 0.80  reader_with/alone 1.10"

# A report without the rows a mode reads (here the mixed job's reader rows) stops the
# comparison with a message, not a traceback.
# fd: fa's mixed report without its reader rows.
cat > "$t/fd" <<FAKE
#!/bin/bash
"$t/fa" "\$@" || exit
while [[ \$# -gt 0 && \$1 != --json ]]; do shift; done
"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["results"] = [r for r in d["results"] if r["params"].get("role") != "reader"]
json.dump(d, open(sys.argv[1], "w"))' "\$2"
FAKE
chmod +x "$t/fd"
if "$PY" "$src/scripts/ab_bench.py" --rounds 1 --dir "$t/out" mixed22 "$t/fd" > "$t/log" 2>&1; then
  fail "a report without reader rows was not reported"
fi
grep -q "fd: cannot read its figures (no mixed rows for strata-mem in" "$t/log" ||
  fail "missing rows message: $(cat "$t/log")"

printf '#!/bin/bash\necho broken; exit 3\n' > "$t/fc"
chmod +x "$t/fc"
if "$PY" "$src/scripts/ab_bench.py" --rounds 1 --dir "$t/out" fill "$t/fc" > "$t/log" 2>&1; then
  fail "a failing binary was not reported"
fi
grep -q "fc failed (exit 3)" "$t/log" || fail "failure message"
echo "ab_bench ok"
