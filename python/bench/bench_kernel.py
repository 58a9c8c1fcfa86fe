"""A kernel called from Python against `strata analyze` on the same store.

    python3 python/bench/bench_kernel.py --cli build/bin/strata [--algo pr] [--runs 3] \
        [--edges 10000000] [--dir /tmp/strata-bench-kernel]

Builds a store (uniform random edges over 2^20 vertices, directed, compacted) with the Python
package, then times the kernel alone on both sides: the CLI's "kernel" figure from its stderr
summary, and the Snapshot method's call from Python (a read-only open and snapshot, like the
CLI's, outside the timing). Runs alternate between the two sides.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

import stratagraph

ALGOS = {
    # name: (CLI arguments, Python call)
    "pr": (["--algo", "pr", "--iterations", "10"], lambda s: s.pagerank(iterations=10)),
    "bfs": (["--algo", "bfs", "--source", "0"], lambda s: s.bfs(0)),
    "wcc": (["--algo", "wcc"], lambda s: s.wcc()),
    "sssp": (["--algo", "sssp", "--source", "0"], lambda s: s.sssp(0)),
    "cdlp": (["--algo", "cdlp", "--iterations", "10"], lambda s: s.cdlp(iterations=10)),
    "lcc": (["--algo", "lcc"], lambda s: s.lcc()),
}


def cli_seconds(cli, store, args):
    err = subprocess.run([cli, "analyze", "--db", store, "--out", "/dev/null", *args],
                         check=True, capture_output=True, text=True).stderr
    m = re.search(r"kernel (\d+) min (\d+) s|kernel ([0-9.]+) s", err)
    return int(m.group(1)) * 60 + int(m.group(2)) if m.group(1) else float(m.group(3))


def python_seconds(store, call):
    with stratagraph.open(store, read_only=True) as db, db.snapshot() as snap:
        t0 = time.perf_counter()
        call(snap)
        return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--algo", default="pr", choices=sorted(ALGOS))
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--vertices", type=int, default=1 << 20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/strata-bench-kernel")
    a = ap.parse_args()

    store = os.path.join(a.dir, "store")
    os.makedirs(a.dir, exist_ok=True)
    if not os.path.exists(store):
        rng = np.random.default_rng(2)
        with stratagraph.open(store) as db:
            db.insert_edges(rng.integers(0, a.vertices, a.edges, dtype=np.uint64),
                            rng.integers(0, a.vertices, a.edges, dtype=np.uint64),
                            batch=1_000_000)
            db.compact()
    args, call = ALGOS[a.algo]
    cli, py = [], []
    for r in range(a.runs):
        order = [("cli", lambda: cli_seconds(a.cli, store, args)),
                 ("python", lambda: python_seconds(store, call))]
        for name, run in (order if r % 2 == 0 else order[::-1]):
            secs = run()
            (cli if name == "cli" else py).append(secs)
            print(f"run {r + 1} {name:6s} {secs:.3f} s", flush=True)
    print(f"\n{a.algo}: cli {min(cli):.3f} - {max(cli):.3f} s, python {min(py):.3f} - {max(py):.3f} s, "
          f"python / cli (paired) {min(p / c for p, c in zip(py, cli)):.2f} - "
          f"{max(p / c for p, c in zip(py, cli)):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
