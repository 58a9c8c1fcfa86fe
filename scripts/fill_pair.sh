#!/usr/bin/env bash
# Runs two strata-bench binaries' `fill` at the same time, one per core, and keeps both cores
# busy until both finish: whichever finishes first is restarted (its output discarded) until the
# other is done. Without that, the slower binary's last tenths run alone on the machine (no
# neighbor for memory bandwidth or the shared cache) and look faster than they are.
#
#   scripts/fill_pair.sh BIN_A BIN_B OUT_PREFIX [fill options...]
# writes OUT_PREFIX.a and OUT_PREFIX.b (each binary's fill report).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BIN_A BIN_B OUT_PREFIX [fill options...]" >&2
  exit 2
fi
a=$1 b=$2 out=$3
shift 3
"$a" fill "$@" > "$out.a" & pa=$!
"$b" fill "$@" > "$out.b" & pb=$!
filler=""
# Restarts `bin` in the background, output discarded, until the process `wait_for` ends.
keep_busy() {
  local bin=$1 wait_for=$2
  shift 2
  while kill -0 "$wait_for" 2> /dev/null; do
    "$bin" fill "$@" > /dev/null 2>&1 & filler=$!
    while kill -0 "$filler" 2> /dev/null && kill -0 "$wait_for" 2> /dev/null; do sleep 0.2; done
    kill "$filler" 2> /dev/null || true
    wait "$filler" 2> /dev/null || true
  done
}
# Wait for the first to finish, then fill in for it.
while kill -0 "$pa" 2> /dev/null && kill -0 "$pb" 2> /dev/null; do sleep 0.2; done
if ! kill -0 "$pa" 2> /dev/null; then
  wait "$pa"
  keep_busy "$a" "$pb" "$@"
  wait "$pb"
else
  wait "$pb"
  keep_busy "$b" "$pa" "$@"
  wait "$pa"
fi
