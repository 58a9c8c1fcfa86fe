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
  insert       --suite quick --only insert --systems strata-mem: single-edge and batched
               (1024) inserts into a fresh tier, 1 and 2 writers (K edges/s), batch / single
               for 1 writer, 2 writers / 1 batched
  pr           --suite quick --only pr --systems strata-mem,csr: PageRank's time on each, the
               layout and list cache and the iterations (PageRankStats), the paired ratio
  mixed22      --suite full --only mixed --systems strata-mem (scale 22): peak RSS, its ratio
               to the loaded graph, the writer's rate beside the reader / alone, the reader's
               time beside the writer / alone

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
    "insert": ["--suite", "quick", "--only", "insert", "--systems", "strata-mem"],
    "pr": ["--suite", "quick", "--only", "pr", "--systems", "strata-mem,csr"],
    "mixed22": ["--suite", "full", "--only", "mixed", "--systems", "strata-mem"],
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


def parse_insert(_, path):
    rate = {}
    for r in results(path):
        p = r.get("params", {})
        if (r["workload"] == "insert" and r["system"] == "strata-mem" and
                r["metric"] == "edges_per_s" and p.get("wal") == "off"):
            rate[(p["batch"], p["threads"])] = r["value"] / 1e3
    want = [(1, 1), (1, 2), (1024, 1), (1024, 2)]
    if any(k not in rate for k in want):
        raise ValueError("insert rows missing in " + path)
    return {"single_1w_K": rate[(1, 1)], "single_2w_K": rate[(1, 2)],
            "batch_1w_K": rate[(1024, 1)], "batch_2w_K": rate[(1024, 2)],
            "batch/single": rate[(1024, 1)] / rate[(1, 1)],
            "2w/1w_batch": rate[(1024, 2)] / rate[(1024, 1)]}


def parse_pr(_, path):
    row = {}
    for r in results(path):
        if r["workload"] != "pr" or r.get("params", {}).get("graph") != "main":
            continue
        info = r.get("params", {}).get("info", {})
        if r["metric"] == "seconds" and r["system"] in ("strata-mem", "csr"):
            row[r["system"] + "_s"] = r["value"]
            if r["system"] == "strata-mem":
                row["prepare_s"] = info.get("prepare_seconds_median", float("nan"))
                row["iterate_s"] = info.get("iterate_seconds_median", float("nan"))
        elif r["metric"] == "seconds_ratio_paired":
            row["paired"] = r["value"]
    if "strata-mem_s" not in row or "csr_s" not in row:
        raise ValueError("no pr rows for strata-mem and csr in " + path)
    row["separate"] = row["strata-mem_s"] / row["csr_s"]
    return row


def parse_mixed(_, path):
    writer, reader, row = {}, {}, {}
    for r in results(path):
        p = r.get("params", {})
        if r["workload"] != "mixed" or r["system"] != "strata-mem" or "reader" in p:
            continue
        if r["metric"] == "peak_rss_bytes":
            row["peak_MiB"] = r["value"] / 2**20
            before = p.get("info", {}).get("memory_bytes_before", 0)
            row["peak/graph"] = r["value"] / before if before else float("nan")
        elif r["metric"] == "ops_per_s" and p.get("role") == "writer":
            writer[p["readers"]] = r["value"]
        elif r["metric"] == "seconds" and p.get("role") == "reader":
            reader[p["writers"]] = r["value"]
    if "peak_MiB" not in row or any(k not in d for d in (writer, reader) for k in (0, 1)):
        raise ValueError("no mixed rows for strata-mem in " + path)
    row["writer_with/alone"] = writer[1] / writer[0]
    row["reader_with/alone"] = reader[1] / reader[0]
    return row


PARSERS = {"fill": parse_fill, "fill22": parse_fill, "update": parse_update,
           "update22": parse_update, "ingest": parse_ingest, "insert": parse_insert,
           "pr": parse_pr, "mixed22": parse_mixed}


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
            try:
                row = PARSERS[a.mode](p.stdout, stem + ".json")
            except (ValueError, KeyError, OSError) as e:
                sys.exit("%s: cannot read its figures (%s); output in %s.out" % (b, e, stem))
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
