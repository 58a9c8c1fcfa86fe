"""DB.insert_edges from numpy against the same inserts through the C++ API.

    python3 python/bench/bench_insert.py --baseline build/bin/strata-py-insert-baseline \
        [--baseline-nojemalloc build/bin/strata-py-insert-baseline-nojemalloc] \
        [--edges 10000000] [--batch 100000] [--runs 3] [--dir /tmp/strata-bench-insert]

Both sides insert the same edges (uniform random over 2^20 vertices, from one seed) into a new
store with default options, in atomic batches of --batch edges; each is timed from the first
batch to the last commit (close excluded). Runs alternate between the two sides. The C++
baselines are built by `cmake --build build --target strata-py-insert-baseline
strata-py-insert-baseline-nojemalloc` (python/CMakeLists.txt): the first links the engine as
the C++ tools do (jemalloc), the second as the extension does (no jemalloc).
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


def python_run(src, dst, path, batch):
    shutil.rmtree(path, ignore_errors=True)
    db = stratagraph.open(path, create=True)
    t0 = time.perf_counter()
    db.insert_edges(src, dst, batch=batch)
    secs = time.perf_counter() - t0
    db.close()
    return secs


def cxx_run(binary, src_file, dst_file, path, batch):
    shutil.rmtree(path, ignore_errors=True)
    out = subprocess.run([binary, src_file, dst_file, path, str(batch)], check=True,
                         capture_output=True, text=True).stdout
    return float(re.search(r"seconds=([0-9.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--baseline-nojemalloc")
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--vertices", type=int, default=1 << 20)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/strata-bench-insert")
    a = ap.parse_args()

    os.makedirs(a.dir, exist_ok=True)
    rng = np.random.default_rng(1)
    src = rng.integers(0, a.vertices, size=a.edges, dtype=np.uint64)
    dst = rng.integers(0, a.vertices, size=a.edges, dtype=np.uint64)
    src_file, dst_file = os.path.join(a.dir, "src.u64"), os.path.join(a.dir, "dst.u64")
    src.astype("<u8").tofile(src_file)
    dst.astype("<u8").tofile(dst_file)
    store = os.path.join(a.dir, "store")

    sides = [("python", lambda: python_run(src, dst, store, a.batch)),
             ("c++ (jemalloc)", lambda: cxx_run(a.baseline, src_file, dst_file, store, a.batch))]
    if a.baseline_nojemalloc:
        sides.append(("c++ (no jemalloc)",
                      lambda: cxx_run(a.baseline_nojemalloc, src_file, dst_file, store, a.batch)))
    rates = {name: [] for name, _ in sides}
    for r in range(a.runs):
        for name, run in (sides if r % 2 == 0 else sides[::-1]):
            secs = run()
            rates[name].append(a.edges / secs)
            print(f"run {r + 1} {name:18s} {secs:7.2f} s  {a.edges / secs / 1e6:6.3f} M edges/s",
                  flush=True)
    shutil.rmtree(a.dir, ignore_errors=True)
    print(f"\n{a.edges} edges, batches of {a.batch}, {a.runs} runs (M edges/s, min-max):")
    for name, rs in rates.items():
        print(f"  {name:18s} {min(rs) / 1e6:6.3f} - {max(rs) / 1e6:6.3f}")
    py = rates["python"]
    for name, rs in rates.items():
        if name != "python":
            ratios = [p / c for p, c in zip(py, rs)]
            print(f"  python / {name}: {min(ratios):.2f} - {max(ratios):.2f} (paired by run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
