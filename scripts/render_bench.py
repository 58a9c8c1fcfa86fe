#!/usr/bin/python3
"""Render a strata-bench JSON report: a markdown table (with the ratios of StrataGraph figures to
each baseline, as computed by strata-bench from the same run) and PNG plots (ingest rate over
time, latency distributions, analytics bars).

usage: scripts/render_bench.py REPORT.json [OUT_DIR]

Run it with Debian's /usr/bin/python3 (python3-matplotlib is a Debian package; a pyenv or
virtualenv python3 earlier on PATH does not see it).

Writes OUT_DIR/<report name>.md and OUT_DIR/<report name>-*.png (OUT_DIR defaults to the
report's directory). Needs only the Python standard library for the markdown; the plots use
Debian's python3-matplotlib and are skipped (with a note) when it is missing.
"""
import json
import os
import sys

SYSTEMS = ["strata", "strata-mem", "rocksdb", "csr"]
STRATA = ["strata", "strata-mem"]
BASELINES = ["rocksdb", "csr"]
WORKLOADS = ["insert", "update", "search_edge", "scan_nbr", "bfs", "pr", "sssp", "wcc", "tc",
             "mixed", "ingest_large"]
METRIC_ORDER = ["edges_per_s", "ops_per_s", "seconds", "cpu_seconds", "p50_us", "p99_us",
                "max_us", "memory_bytes_per_edge", "disk_bytes_per_edge", "rss_bytes",
                "peak_rss_bytes", "write_amp", "io_write_amp", "space_amp", "stall_seconds",
                "build_seconds"]
# What a smaller value of the ratio means.
LOWER_IS_BETTER = {"seconds", "cpu_seconds", "p50_us", "p99_us", "max_us",
                   "memory_bytes_per_edge", "disk_bytes_per_edge", "rss_bytes", "peak_rss_bytes",
                   "write_amp", "io_write_amp", "space_amp", "stall_seconds", "build_seconds"}


def ident(params):
    """The identifying params of a result (everything but info and baseline)."""
    return {k: v for k, v in params.items() if k not in ("info", "baseline")}


def key_of(params):
    return json.dumps(ident(params), sort_keys=True)


def subset(small, big):
    return all(k in big and big[k] == v for k, v in small.items())


def fmt(value, unit):
    if value is None:
        return ""
    if unit in ("edges/s", "ops/s"):
        for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
            if abs(value) >= div:
                return "%.3g%s" % (value / div, suf)
        return "%.3g" % value
    if unit == "B":
        return "%.1f MiB" % (value / 1048576.0)
    if unit == "s":
        return "%.3g s" % value
    if unit == "us":
        return "%.3g us" % value
    if unit == "x":
        return "%.2fx" % value
    if unit == "bool":
        return "yes" if value else "NO"
    if unit.startswith("B/"):
        return "%.2f B" % value
    return "%.4g %s" % (value, unit)


def params_text(p):
    p = ident(p)
    if not p:
        return "-"
    return ", ".join("%s=%s" % (k, v) for k, v in p.items())


def load(path):
    with open(path) as f:
        return json.load(f)


def by_workload(results):
    out = {}
    for r in results:
        out.setdefault(r["workload"], []).append(r)
    return out


def find_value(rs, system, metric, params, allow_subset):
    """The result of `system` for `metric` whose identifying params equal `params` (or, for a
    baseline, are a subset of them)."""
    want = ident(params)
    exact = [r for r in rs if r["system"] == system and r["metric"] == metric
             and ident(r["params"]) == want]
    if exact:
        return exact[0]
    if allow_subset:
        sub = [r for r in rs if r["system"] == system and r["metric"] == metric
               and subset(ident(r["params"]), want)]
        if sub:
            return sub[0]
    return None


def ratio_for(rs, system, metric, params, baseline):
    for r in rs:
        if (r["system"] == system and r["metric"] == metric + "_ratio"
                and r["params"].get("baseline") == baseline and ident(r["params"]) == ident(params)):
            return r["value"]
    return None


def workload_table(rs):
    """Rows: (metric, params) of the StrataGraph results, then baseline-only rows."""
    rows = []
    seen = set()
    plain = [r for r in rs if not r["metric"].endswith("_ratio") and r["system"] in SYSTEMS]
    for r in plain:
        if r["system"] not in STRATA:
            continue
        k = (r["metric"], key_of(r["params"]))
        if k not in seen:
            seen.add(k)
            rows.append((r["metric"], ident(r["params"]), r["unit"]))
    for r in plain:
        if r["system"] in STRATA:
            continue
        covered = any(m == r["metric"] and subset(ident(r["params"]), p) for m, p, _ in rows)
        k = (r["metric"], key_of(r["params"]))
        if not covered and k not in seen:
            seen.add(k)
            rows.append((r["metric"], ident(r["params"]), r["unit"]))
    order = {m: i for i, m in enumerate(METRIC_ORDER)}
    rows.sort(key=lambda x: (json.dumps(x[1], sort_keys=True), order.get(x[0], 99), x[0]))
    present = [s for s in SYSTEMS if any(r["system"] == s for r in plain)]
    ratio_cols = [(s, b) for s in STRATA for b in BASELINES
                  if any(r["system"] == s and r["metric"].endswith("_ratio")
                         and r["params"].get("baseline") == b for r in rs)]
    head = ["params", "metric"] + present + ["%s / %s" % c for c in ratio_cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for metric, params, unit in rows:
        cells = [params_text(params), metric + ("" if metric not in LOWER_IS_BETTER else " (lower is better)")]
        for s in present:
            r = find_value(rs, s, metric, params, allow_subset=s in BASELINES)
            cells.append(fmt(r["value"], r["unit"]) if r else "")
        for s, b in ratio_cols:
            v = ratio_for(rs, s, metric, params, b)
            cells.append(fmt(v, "x") if v is not None else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def get(results, workload, system, metric, **params):
    for r in results:
        if (r["workload"] == workload and r["system"] == system and r["metric"] == metric
                and all(r["params"].get(k) == v for k, v in params.items())):
            return r
    return None


def targets(results):
    """The targets of issues 2, 8 and 28, checked against this report."""
    out = []

    def line(what, target, r, ok, note=""):
        if r is None:
            out.append("| %s | %s | not measured | - | %s |" % (what, target, note))
        else:
            out.append("| %s | %s | %s | %s | %s |" % (what, target, fmt(r["value"], r["unit"]),
                                                      "-" if ok is None else
                                                      "met" if ok(r["value"]) else "**MISSED**", note))

    for sysname in STRATA:
        r = get(results, "insert", sysname, "edges_per_s", batch=1, threads=1, wal="off")
        line("%s single-edge inserts, 1 writer" % sysname, ">= 350K/s per thread", r,
             lambda v: v >= 350e3,
             "undirected edges (2 directed entries each); RapidStore ref ~150K undirected = ~300K directed/s/thread")
        r = get(results, "insert", sysname, "edges_per_s", batch=1024, threads=1, wal="off")
        line("%s batched inserts (1024), 1 writer" % sysname, ">= 1M/s per thread", r,
             lambda v: v >= 1e6)
    r = get(results, "pr", "strata-mem", "seconds_ratio", baseline="csr")
    line("PageRank strata-mem / CSR (time)", "<= 1.7x", r, lambda v: v <= 1.7,
         "RapidStore ref 1.5-1.9x of its CSR")
    r = get(results, "pr", "strata", "seconds_ratio", baseline="csr", cache="warm")
    line("PageRank strata (on disk, warm) / CSR (time)", "<= 1.7x", r, lambda v: v <= 1.7)
    r = get(results, "insert", "strata-mem", "memory_bytes_per_edge_ratio", baseline="csr")
    line("memory strata-mem / CSR per directed edge", "<= 2x", r, lambda v: v <= 2.0,
         "CSR here has 32-bit IDs (~4.3 B/edge); RapidStore ref 21 B vs 8 B")
    # The in-memory tier at full size, with readers and two writers. Each figure is a
    # ratio of two results of this run.
    def derived(value, unit="x"):
        return None if value is None else {"value": value, "unit": unit}

    def ratio(a, b):
        return a["value"] / b["value"] if a and b and b["value"] else None

    r = get(results, "update", "strata-mem", "fill_rate_ratio", phase="load")
    line("strata-mem load: last tenth / first tenth (rate)", ">= 0.7", r, lambda v: v >= 0.7,
         "update load, 80% of the main graph in batches of 1024")
    r = get(results, "update", "strata-mem", "fill_rate_ratio_paired", phase="load")
    line("strata-mem load, paired: last tenth / first tenth (rate)", ">= 0.7", r,
         lambda v: v >= 0.7,
         "the same tenths, in slices alternated between a store at 90% and a fresh one: "
         "both rates of the same moments")
    mem_load = get(results, "update", "strata-mem", "edges_per_s", phase="load")
    disk_load = get(results, "update", "strata", "edges_per_s", phase="load")
    line("strata-mem / strata update load (rate)", ">= 1x", derived(ratio(mem_load, disk_load)),
         lambda v: v >= 1.0)
    alone = get(results, "mixed", "strata-mem", "ops_per_s", role="writer", readers=0)
    with_r = get(results, "mixed", "strata-mem", "ops_per_s", role="writer", readers=1, reader=None)
    line("strata-mem mixed: writer with 1 reader / alone (rate)", ">= 0.85",
         derived(ratio(with_r, alone)), lambda v: v >= 0.85)
    control = get(results, "mixed", "strata-mem", "ops_per_s", role="writer", readers=1, reader="csr")
    line("control: strata-mem writer beside a CSR PageRank / alone (rate)", "(none)",
         derived(ratio(control, alone)), None,
         "the reader does not touch the store: what the machine takes from the writer")
    r_alone = get(results, "mixed", "strata-mem", "seconds", role="reader", writers=0, reader=None)
    r_with = get(results, "mixed", "strata-mem", "seconds", role="reader", writers=1, reader=None)
    line("strata-mem mixed: reader with 1 writer / alone (time)", "<= 1.15x",
         derived(ratio(r_with, r_alone)), lambda v: v <= 1.15)
    c_alone = get(results, "mixed", "strata-mem", "seconds", role="reader", writers=0, reader="csr")
    c_with = get(results, "mixed", "strata-mem", "seconds", role="reader", writers=1, reader="csr")
    line("control: CSR PageRank beside the strata-mem writer / alone (time)", "(none)",
         derived(ratio(c_with, c_alone)), None,
         "the reader does not touch the store: what the machine takes from the reader")
    peak = get(results, "mixed", "strata-mem", "peak_rss_bytes")
    loaded = get(results, "insert", "strata-mem", "memory_bytes_per_edge")  # main graph, loaded
    edges = loaded["params"].get("info", {}).get("stored_edges") if loaded else None
    graph_bytes = loaded["value"] * edges if edges else None
    line("strata-mem mixed: peak RSS / loaded graph memory", "<= 2x",
         derived(peak["value"] / graph_bytes if peak and graph_bytes else None),
         lambda v: v <= 2.0, "peak RSS is the process's VmHWM over the workload")
    pinfo = peak["params"].get("info", {}) if peak else {}
    e0, e1 = pinfo.get("stored_edges_before"), pinfo.get("stored_edges_after")
    grown = graph_bytes * e1 / e0 if graph_bytes and e0 and e1 else None
    line("context: strata-mem mixed peak RSS / the graph when the writers stop", "(none)",
         derived(peak["value"] / grown if peak and grown else None), None,
         "the writers add edges throughout: the loaded graph's bytes per entry times the entries "
         "then (%s); the readers alone peaked at %s" % (
             "x%.2f" % (e1 / e0) if e0 and e1 else "?",
             "%.0f MiB" % (pinfo["peak_rss_readers_alone"] / 1048576.0)
             if pinfo.get("peak_rss_readers_alone") else "?"))
    for batch in (1, 1024):
        one = get(results, "insert", "strata-mem", "edges_per_s", batch=batch, threads=1, wal="off")
        two = get(results, "insert", "strata-mem", "edges_per_s", batch=batch, threads=2, wal="off")
        line("strata-mem inserts, batch %d: 2 writers / 1 (rate)" % batch, ">= 1.5x",
             derived(ratio(two, one)), lambda v: v >= 1.5)
    for threads in (1, 2):
        single = get(results, "insert", "strata-mem", "edges_per_s", batch=1, threads=threads, wal="off")
        batched = get(results, "insert", "strata-mem", "edges_per_s", batch=1024, threads=threads, wal="off")
        line("strata-mem inserts, %d writer(s): batch 1024 / single (rate)" % threads, ">= 3x",
             derived(ratio(batched, single)), lambda v: v >= 3.0)
    r = get(results, "pr", "strata-mem", "seconds_ratio", baseline="csr")
    line("PageRank strata-mem / CSR (time), issue 28", "<= 1.5x", r, lambda v: v <= 1.5)
    r = get(results, "pr", "strata-mem", "seconds_ratio_paired", baseline="csr")
    note = ""
    if r:
        info = r["params"].get("info", {})
        note = "median of %s pairs' ratios, the two kernels alternated in one process%s" % (
            info.get("pairs", "?"),
            "" if info.get("digests_match", True) else "; DIGESTS DIFFER")
    line("PageRank strata-mem / CSR (time), paired, issue 28", "<= 1.5x", r,
         lambda v: v <= 1.5, note)
    big_s = get(results, "ingest_large", "strata", "edges_per_s")
    big_r = get(results, "ingest_large", "rocksdb", "edges_per_s")
    line("ingest_large strata / RocksDB (rate)", ">= 6x", derived(ratio(big_s, big_r)),
         lambda v: v >= 6.0)
    # The same target's memory half: the process's peak RSS against the store's budget.
    rss = get(results, "ingest_large", "strata", "peak_rss_bytes")
    budget = big_s["params"].get("info", {}).get("memory_budget") if big_s else None
    note = ""
    if rss and budget:
        note = "peak %.0f MiB (the process's VmHWM, %.0f MiB of it before the store opened), budget %.0f MiB" % (
            rss["value"] / 2**20, rss["params"].get("info", {}).get("rss_at_open", 0) / 2**20,
            budget / 2**20)
    line("ingest_large strata peak RSS / memory budget", "<= 1x",
         derived(rss["value"] / budget if rss and budget else None), lambda v: v <= 1.0, note)
    return "\n".join(["| target | goal | measured | verdict | note |", "|---|---|---|---|---|"] + out)


def render_markdown(rep, name):
    m = rep.get("machine", {})
    results = rep["results"]
    parts = ["# strata-bench report: %s suite" % rep.get("suite", "?"), ""]
    parts.append("- commit: `%s` (%s)" % (rep.get("commit", "?"), m.get("tree", "?")))
    parts.append("- machine: %s, %s cores, %.1f GiB RAM, %s, %s" % (
        m.get("cpu_model", "?"), m.get("cores", "?"), m.get("memory_bytes", 0) / 2 ** 30,
        m.get("kernel", "?"), m.get("os", "?")))
    parts.append("- build: %s; %s; RocksDB %s" % (m.get("build", "?"), m.get("compiler", "?"),
                                                  m.get("rocksdb", "?")))
    parts.append("- page cache: %s" % m.get("page_cache", "?"))
    parts.append("- load average (1, 5, 15 min) at start: %s; at end: %s" % (
        m.get("loadavg_at_start", "?"), m.get("loadavg_at_end", "?")))
    def probe(p):
        if not p:
            return "?"
        return "%.0f / %.0f" % (p.get("small_m_per_s", 0), p.get("large_m_per_s", 0))
    if "cache_probe_at_start" in m:
        p0 = m["cache_probe_at_start"]
        parts.append("- cache probe (%s threads of random read-modify-writes, M/s: over %d KiB "
                     "each, within the L2 / over %.1f MiB each, half the last-level cache; "
                     "bench/cache_probe.h) at start: %s; at end: %s" % (
                         p0.get("threads", "?"), p0.get("small_bytes_per_thread", 0) // 1024,
                         p0.get("large_bytes_per_thread", 0) / 2 ** 20, probe(p0),
                         probe(m.get("cache_probe_at_end"))))
    suite = [r for r in results if r["metric"] == "suite_seconds"]
    if suite:
        parts.append("- suite wall time: %.0f s" % suite[0]["value"])
    parts.append("")
    parts.append("Ratios are StrataGraph / baseline from this run only (for throughput, > 1 is "
                 "better for StrataGraph; for times, sizes and latencies, < 1 is).")
    parts.append("")
    parts.append("## Targets (issues 2, 8 and 28)")
    parts.append("")
    parts.append(targets(results))
    parts.append("")
    agree = [r for r in results if r["metric"] == "results_agree"]
    if agree:
        parts.append("## Do the systems compute the same results?")
        parts.append("")
        parts.append("| workload | graph | agree | digests |")
        parts.append("|---|---|---|---|")
        for r in agree:
            info = r["params"].get("info", {})
            parts.append("| %s | %s | %s | %s |" % (r["workload"], r["params"].get("graph", ""),
                                                    fmt(r["value"], "bool"),
                                               "; ".join("%s: %s" % (k, v) for k, v in info.items())))
        parts.append("")
    wl = by_workload(results)
    for w in WORKLOADS:
        if w not in wl:
            continue
        parts.append("## %s" % w)
        parts.append("")
        parts.append(workload_table(wl[w]))
        parts.append("")
    jobs = [r for r in results if r["metric"] == "job_seconds"]
    if jobs:
        parts.append("## Jobs")
        parts.append("")
        parts.append("| job | system | seconds | ok |")
        parts.append("|---|---|---|---|")
        for r in jobs:
            parts.append("| %s | %s | %.1f | %s |" % (r["workload"], r["system"], r["value"],
                                                     r["params"].get("info", {}).get("ok")))
        parts.append("")
    parts.append("## Plots")
    parts.append("")
    for suffix, title in (("ingest", "ingest rate over time"), ("latency", "latency distributions"),
                          ("analytics", "analytics")):
        parts.append("![%s](%s-%s.png)" % (title, name, suffix))
    parts.append("")
    return "\n".join(parts)


def render_plots(rep, out_dir, name):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing (apt-get install python3-matplotlib): no plots", file=sys.stderr)
        return
    results = rep["results"]
    colors = {"strata": "tab:blue", "strata-mem": "tab:cyan", "rocksdb": "tab:red", "csr": "tab:gray"}

    # Ingest rate over time: the 80% load of the update workload, and ingest_large (a panel
    # only for the workloads the report has).
    ingest_panels = [(w, title) for w, title in (("update", "update: load 80% (batches of 1024)"),
                                                 ("ingest_large", "ingest_large (batches of 1024)"))
                     if any(r["workload"] == w and r["metric"] == "edges_per_s" for r in results)]
    if not ingest_panels:
        ingest_panels = [("update", "update: load 80% (batches of 1024)")]
    fig, axes = plt.subplots(1, len(ingest_panels), figsize=(6 * len(ingest_panels), 4.5),
                             squeeze=False)
    for ax, (w, title) in zip(axes[0], ingest_panels):
        for r in results:
            if r["workload"] != w or r["metric"] != "edges_per_s":
                continue
            series = r["params"].get("info", {}).get("series")
            if not series or len(series) < 2:
                continue
            series = sorted(series)
            final = max(e for _, e in series)
            ts, rates = [], []
            for (t0, e0), (t1, e1) in zip(series, series[1:]):
                # Skip the tail after the last edge (a sample taken after the writers finished)
                # and intervals too short to mean anything.
                if e0 >= final or t1 - t0 < 0.05:
                    continue
                if t1 > t0:
                    ts.append(t1)
                    rates.append((e1 - e0) / (t1 - t0))
            ax.plot(ts, rates, label=r["system"], color=colors.get(r["system"]))
        ax.set_title(title)
        ax.set_xlabel("seconds")
        ax.set_ylabel("edges/s")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "%s-ingest.png" % name), dpi=110)
    plt.close(fig)

    # Latency CDFs.
    panels = [("insert", dict(batch=1, threads=1, wal="off"), "insert, single-edge, 1 writer"),
              ("update", dict(phase="insert"), "update: single-edge inserts"),
              ("search_edge", dict(cache="warm"), "search_edge"),
              ("scan_nbr", dict(cache="warm"), "scan_nbr")]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.5))
    for ax, (w, want, title) in zip(axes, panels):
        for r in results:
            if r["workload"] != w or r["metric"] not in ("edges_per_s", "ops_per_s"):
                continue
            p = r["params"]
            if not all(p.get(k, v if r["system"] == "csr" else None) == v for k, v in want.items()):
                continue
            cdf = p.get("info", {}).get("latency_cdf_us")
            if not cdf:
                continue
            ax.plot([c[1] for c in cdf], [c[0] for c in cdf], marker=".", label=r["system"],
                    color=colors.get(r["system"]))
        ax.set_xscale("log")
        ax.set_title(title)
        ax.set_xlabel("latency (us)")
        ax.set_ylabel("quantile")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "%s-latency.png" % name), dpi=110)
    plt.close(fig)

    # Analytics bars (warm, seconds, log scale).
    algos = ["bfs", "pr", "sssp", "wcc", "tc"]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.2
    for i, s in enumerate(SYSTEMS):
        vals = []
        for a in algos:
            r = None
            for x in results:
                if (x["workload"] == a and x["system"] == s and x["metric"] == "seconds"
                        and x["params"].get("cache", "warm") == "warm"):
                    r = x
            vals.append(r["value"] if r else 0)
        ax.bar([j + (i - 1.5) * width for j in range(len(algos))], vals, width, label=s,
               color=colors.get(s))
    ax.set_xticks(range(len(algos)))
    ax.set_xticklabels(algos)
    ax.set_yscale("log")
    ax.set_ylabel("seconds (warm, median)")
    ax.set_title("analytics")
    ax.grid(alpha=0.3, axis="y")
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "%s-analytics.png" % name), dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else (os.path.dirname(path) or ".")
    os.makedirs(out_dir, exist_ok=True)
    rep = load(path)
    name = os.path.splitext(os.path.basename(path))[0]
    md = render_markdown(rep, name)
    md_path = os.path.join(out_dir, name + ".md")
    with open(md_path, "w") as f:
        f.write(md)
    render_plots(rep, out_dir, name)
    print("wrote %s and %s-{ingest,latency,analytics}.png" % (md_path, os.path.join(out_dir, name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
