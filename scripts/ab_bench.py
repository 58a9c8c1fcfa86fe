#!/usr/bin/python3
"""Alternate strata-bench binaries, one run at a time, and print each run's figures and their
medians: the A/B method docs/benchmarks.md uses on a machine whose speed drifts from minute to
minute (a run of A, then of B, then A again: a slow stretch slows one run of each, not every
run of one).

usage: scripts/ab_bench.py [--rounds N] [--dir DIR] MODE BIN [BIN...]

MODE is one of
  fill         strata-bench fill --scale 20 --weighted (one writer into strata-mem): total CPU
               of the tenths, first and last tenth's CPU and rate, last / first
  fill22       strata-bench fill --scale 22 (unweighted, 103 M directed entries): as fill
  update       --suite quick --only update --systems strata-mem: the 80% load's rate and CPU,
               the optimistic builds rebuilt under locks
  update22     the same at the full suite's scale (22)
  ingest       --suite quick --only ingest_large --systems strata --large-analytics none:
               rate, peak RSS, process CPU

Each run's output is kept in DIR (default /tmp/ab_bench) as <binary name>.<round>.{out,json}.
Build the binaries first and copy them aside (a rebuild replaces build/bin/strata-bench).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

MODES = {
    "fill": ["fill", "--scale", "20", "--weighted"],
    "fill22": ["fill", "--scale", "22"],
    "update": ["--suite", "quick", "--only", "update", "--systems", "strata-mem"],
    "update22": ["--suite", "full", "--only", "update", "--systems", "strata-mem"],
    "ingest": ["--suite", "quick", "--only", "ingest_large", "--systems", "strata",
               "--large-analytics", "none"],
}


def parse_fill(out, _):
    cpus = [float(x) for x in re.findall(r"cpu ([0-9.]+) s\)", out)]
    rates = [float(x) for x in re.findall(r"tenth \d:\s+(\d+) K", out)]
    if len(cpus) != 10 or len(rates) != 10:
        raise ValueError("fill output without ten tenths")
    return {"cpu_s": sum(cpus), "first_cpu_s": cpus[0], "last_cpu_s": cpus[-1],
            "first_K": rates[0], "last_K": rates[-1], "last/first": rates[-1] / rates[0]}


def results(path):
    with open(path) as f:
        return json.load(f)["results"]


def parse_update(_, path):
    row = {}
    for r in results(path):
        p = r.get("params", {})
        if r["workload"] == "update" and r["metric"] == "edges_per_s" and p.get("phase") == "load":
            row["load_K"] = r["value"] / 1e3
            row["cpu_s"] = p.get("info", {}).get("cpu_seconds", float("nan"))
        m = re.search(r"rebuilt=(\d+)", p.get("info", {}).get("engine", ""))
        if m:
            row["rebuilt_M"] = int(m.group(1)) / 1e6
    if "load_K" not in row:
        raise ValueError("no update load in " + path)
    return row


def parse_ingest(_, path):
    row = {}
    for r in results(path):
        if r["workload"] != "ingest_large" or r["system"] != "strata":
            continue
        if r["metric"] == "edges_per_s":
            row["K_edges/s"] = r["value"] / 1e3
        elif r["metric"] == "peak_rss_bytes":
            row["peak_MiB"] = r["value"] / 2**20
        elif r["metric"] == "cpu_seconds":
            row["cpu_s"] = r["value"]
    if "K_edges/s" not in row:
        raise ValueError("no ingest_large result in " + path)
    return row


PARSERS = {"fill": parse_fill, "fill22": parse_fill, "update": parse_update,
           "update22": parse_update, "ingest": parse_ingest}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/ab_bench")
    ap.add_argument("mode", choices=sorted(MODES))
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    for b in a.bins:
        if not os.access(b, os.X_OK):
            ap.error("not an executable: " + b)
    os.makedirs(a.dir, exist_ok=True)
    rows = {b: [] for b in a.bins}
    for r in range(a.rounds):
        for b in a.bins:
            stem = os.path.join(a.dir, "%s.%d" % (os.path.basename(b), r))
            cmd = [b] + MODES[a.mode]
            if not a.mode.startswith("fill"):
                cmd += ["--json", stem + ".json", "--dir", os.path.join(a.dir, "data")]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            with open(stem + ".out", "w") as f:
                f.write(p.stdout)
            if p.returncode != 0:
                sys.exit("%s failed (exit %d); output in %s.out" % (b, p.returncode, stem))
            row = PARSERS[a.mode](p.stdout, stem + ".json")
            rows[b].append(row)
            print("round %d  %-24s %s" % (r + 1, os.path.basename(b),
                                          "  ".join("%s %.2f" % kv for kv in row.items())),
                  flush=True)
    print("medians over %d rounds:" % a.rounds)
    for b in a.bins:
        keys = rows[b][0].keys()
        med = {k: statistics.median(x[k] for x in rows[b]) for k in keys}
        print("  %-24s %s" % (os.path.basename(b), "  ".join("%s %.2f" % kv for kv in med.items())))


if __name__ == "__main__":
    main()
