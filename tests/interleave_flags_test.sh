#!/bin/bash
# strata-bench interleave's graph and PageRank flags: --unweighted loads the Kronecker graph
# without weights (the load line says so; by default it is weighted) and PageRank's settings
# still agree with each other (the bench fails a run whose ranks differ from the first
# setting's); --pr-iterations N is what each PageRank run is given (each run's line says how
# many; by default the kernel's 20), takes an integer in [1, 100000] and refuses anything else
# naming the option; --unweighted with --db is refused (a store keeps its weights), as is
# --cold without --db and an unknown option (the options are CLI11's, as `fill`'s); with
# --pr-owned each PageRank run is handed its snapshot (its line says how many blocks the layout
# released and that the snapshot went before the iterations), without it no run says so; each
# run's line gives its layout-and-cache and iteration seconds; a setting's d or n is PageRank's
# degree grouping on or off.
# Usage: interleave_flags_test.sh STRATA_BENCH
set -euo pipefail
bench=$1
run() { "$bench" interleave --scale 11 --kernels pagerank --settings g1,g4 --rounds 1 "$@"; }
out=$(run --unweighted --pr-iterations 3 --pr-owned)
grep -q "^load: .*undirected, unweighted" <<<"$out" || { echo "no unweighted load line"; exit 1; }
[[ $(grep -c "^    3 iterations (layout and list cache [0-9.]* s, iterations [0-9.]* s);" <<<"$out") == 2 ]] || { echo "runs not given 3 iterations"; exit 1; }
owned="snapshot handed over: [1-9][0-9]* blocks released during the layout, let go before"
[[ $(grep -c "$owned" <<<"$out") == 2 ]] || { echo "runs not handed their snapshots"; exit 1; }
out=$(run)
grep -q "^load: .*undirected, weighted" <<<"$out" || { echo "no weighted load line"; exit 1; }
[[ $(grep -c "^    20 iterations (layout and list cache [0-9.]* s, iterations [0-9.]* s);" <<<"$out") == 2 ]] || { echo "runs not given 20 iterations"; exit 1; }
! grep -q "handed over" <<<"$out" || { echo "a run was handed its snapshot without --pr-owned"; exit 1; }
for bad in 0 -1 x 3x 100001; do
  if err=$(run --pr-iterations "$bad" 2>&1); then echo "--pr-iterations $bad accepted"; exit 1; fi
  grep -q -- "--pr-iterations" <<<"$err" || { echo "error does not name the option: $err"; exit 1; }
done
if err=$("$bench" interleave --unweighted --db /nonexistent 2>&1); then
  echo "--unweighted with --db accepted"; exit 1
fi
grep -q -- "--unweighted" <<<"$err" || { echo "error does not name the option: $err"; exit 1; }
if err=$("$bench" interleave --cold 2>&1); then echo "--cold without --db accepted"; exit 1; fi
grep -q -- "--db" <<<"$err" || { echo "error does not name --db: $err"; exit 1; }
# A setting's d / n asks for PageRank's degree grouping on / off (absent: the kernel's default);
# any other trailing letter is refused, naming the setting.
"$bench" interleave --scale 11 --kernels pagerank --settings g1n,g1d,g1 --rounds 1 \
  --pr-iterations 2 >/dev/null || { echo "settings g1n,g1d,g1 refused"; exit 1; }
if err=$("$bench" interleave --scale 11 --kernels pagerank --settings g1x --rounds 1 2>&1); then
  echo "setting g1x accepted"; exit 1
fi
grep -q "bad setting g1x" <<<"$err" || { echo "error does not name the setting: $err"; exit 1; }
if err=$("$bench" interleave --no-such-flag 2>&1); then echo "an unknown option accepted"; exit 1; fi
grep -q -- "--no-such-flag" <<<"$err" || { echo "error does not name the option: $err"; exit 1; }
echo ok
