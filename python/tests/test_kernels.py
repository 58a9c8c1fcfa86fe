"""Every kernel against NetworkX (or, where NetworkX defines the measure differently, a
reference written here from the Graphalytics definition) on random graphs of each store kind.
"""

from collections import Counter

import networkx as nx
import numpy as np
import pytest

import stratagraph
from conftest import KINDS, make_store, random_edges

N = 400


def nx_graph(kind, src, dst, weights=None):
    g = nx.Graph() if kind == "undirected" else nx.DiGraph()
    g.add_nodes_from(range(N))
    if weights is None:
        g.add_edges_from(zip(src.tolist(), dst.tolist()))
    else:
        g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), weights.tolist()))
    return g


@pytest.fixture(params=[(800, 11), (2400, 12)], ids=["sparse", "dense"])
def graph(request, tmp_path, kind):
    """(store snapshot, networkx graph, kind); the store is flushed halfway, so kernels read
    both the disk levels and the memgraph."""
    m, seed = request.param
    src, dst = random_edges(N, m, seed)
    w = np.random.default_rng(seed).uniform(0.1, 1.0, size=len(src))
    db = make_store(tmp_path / "g", N, src[: m // 2], dst[: m // 2], w[: m // 2], **KINDS[kind])
    db.flush()
    db.insert_edges(src[m // 2:], dst[m // 2:], w[m // 2:])
    snap = db.snapshot()
    yield snap, nx_graph(kind, src, dst, w), kind
    db.close()


def pagerank_reference(g, damping, iterations):
    """Graphalytics PageRank: fixed iterations, sinks' rank spread uniformly."""
    n = g.number_of_nodes()
    out = [list(g.successors(v)) if g.is_directed() else list(g.neighbors(v)) for v in range(n)]
    pr = np.full(n, 1.0 / n)
    for _ in range(iterations):
        nxt = np.full(n, (1 - damping) / n)
        sink = sum(pr[v] for v in range(n) if not out[v])
        nxt += damping * sink / n
        for v in range(n):
            if out[v]:
                nxt[out[v]] += damping * pr[v] / len(out[v])
        pr = nxt
    return pr


def test_pagerank(graph):
    snap, g, _ = graph
    pr = snap.pagerank(damping=0.85, iterations=30)
    assert pr.shape == (snap.vertex_id_bound,) and pr.dtype == np.float64
    assert not pr[N:].any()  # IDs [N, bound) hold no vertex
    pr = pr[:N]
    # The kernel keeps contributions in single precision: relative error < 3.4e-7
    # (docs/analytics.md).
    np.testing.assert_allclose(pr, pagerank_reference(g, 0.85, 30), rtol=1e-6, atol=0)
    # NetworkX converges to the same fixed point (dangling rank spread uniformly there too).
    converged = snap.pagerank(iterations=200)[:N]
    # nx.pagerank needs scipy; its pure-Python power iteration is the same algorithm.
    nx_pagerank = getattr(nx.algorithms.link_analysis.pagerank_alg, "_pagerank_python",
                          nx.pagerank)
    want = nx_pagerank(g, alpha=0.85, tol=1e-13, max_iter=1000, weight=None)
    np.testing.assert_allclose(converged, [want[v] for v in range(N)], rtol=1e-6, atol=0)
    assert abs(pr.sum() - 1) < 1e-6
    # The list cache changes where the lists are read from, not the ranks (bit for bit).
    for cache_bytes in (0, 4096, 1 << 30):
        np.testing.assert_array_equal(snap.pagerank(damping=0.85, iterations=30,
                                                    cache_bytes=cache_bytes)[:N], pr)
    with pytest.raises(ValueError, match="cache_bytes"):
        snap.pagerank(cache_bytes=-1)


def test_bfs(graph):
    snap, g, _ = graph
    for source in (0, 17, 399):
        depth = snap.bfs(source)
        want = nx.single_source_shortest_path_length(g, source)
        assert depth.dtype == np.int64
        assert {v: int(d) for v, d in enumerate(depth) if d != stratagraph.UNREACHABLE} == want


def test_sssp(graph):
    snap, g, _ = graph
    for source in (0, 42):
        dist = snap.sssp(source)
        want = nx.single_source_dijkstra_path_length(g, source, weight="weight")
        reached = {v: d for v, d in enumerate(dist.tolist()) if np.isfinite(d)}
        assert reached.keys() == want.keys()
        np.testing.assert_allclose([reached[v] for v in want], list(want.values()), rtol=1e-12)


def test_wcc(graph):
    snap, g, kind = graph
    label = snap.wcc()
    assert (label[N:] == stratagraph.NO_LABEL).all()
    label = label[:N]
    comps = nx.weakly_connected_components(g) if g.is_directed() else nx.connected_components(g)
    want = {frozenset(c) for c in comps}
    got = {}
    for v, l in enumerate(label.tolist()):
        got.setdefault(l, set()).add(v)
    assert {frozenset(c) for c in got.values()} == want
    assert all(l == min(got[l]) for l in got)  # labelled by the smallest member


def cdlp_reference(g, iterations):
    """Graphalytics CDLP: synchronous; most frequent label among in- and out-neighbors (a
    neighbor both ways counts twice on directed graphs), smallest on ties."""
    labels = list(range(g.number_of_nodes()))
    for _ in range(iterations):
        nxt = []
        for v in range(len(labels)):
            if g.is_directed():
                nbrs = list(g.successors(v)) + list(g.predecessors(v))
            else:
                nbrs = list(g.neighbors(v))
            if not nbrs:
                nxt.append(labels[v])
                continue
            c = Counter(labels[u] for u in nbrs)
            top = max(c.values())
            nxt.append(min(l for l, k in c.items() if k == top))
        labels = nxt
    return labels


def test_cdlp(graph):
    snap, g, _ = graph
    label = snap.cdlp(iterations=5)
    assert (label[N:] == stratagraph.NO_LABEL).all()
    assert label[:N].tolist() == cdlp_reference(g, 5)


def lcc_reference(g):
    """Graphalytics LCC on a directed graph: N(v) = in- and out-neighbors without v; ordered
    edges among N(v) over |N(v)| (|N(v)| - 1)."""
    out = []
    for v in range(g.number_of_nodes()):
        nb = (set(g.successors(v)) | set(g.predecessors(v))) - {v}
        k = len(nb)
        if k < 2:
            out.append(0.0)
            continue
        links = sum(1 for u in nb for w in g.successors(u) if w in nb and w != u)
        out.append(links / (k * (k - 1)))
    return out


def test_lcc_and_triangles(graph):
    snap, g, kind = graph
    lcc = snap.lcc()
    assert not lcc[N:].any()
    lcc = lcc[:N]
    if kind == "undirected":
        want = nx.clustering(g)  # the Graphalytics definition on undirected graphs
        np.testing.assert_allclose(lcc, [want[v] for v in range(N)], rtol=1e-12)
    else:
        # nx.clustering on a DiGraph is Fagiolo's measure, not Graphalytics'.
        np.testing.assert_allclose(lcc, lcc_reference(g), rtol=1e-12)
    und = g.to_undirected() if g.is_directed() else g
    assert snap.triangle_count() == sum(nx.triangles(und).values()) // 3
    assert snap.triangle_count() > 0


def test_khop(graph):
    snap, g, kind = graph
    for k in (0, 1, 2, 3):
        got = snap.khop(5, k=k)
        assert got.tolist() == sorted(nx.single_source_shortest_path_length(g, 5, cutoff=k))
    if kind == "in_edges":
        got = snap.khop(5, k=2, direction="in")
        assert got.tolist() == sorted(nx.single_source_shortest_path_length(g.reverse(), 5, cutoff=2))


def test_absent_vertices(tmp_path):
    """Kernel arrays span vertex_id_bound; absent vertices hold each kernel's marker."""
    with stratagraph.open(str(tmp_path / "g"), wal="off") as db:
        db.insert_edges(np.array([0, 1, 70]), np.array([1, 2, 0]))
        db.delete_vertices(np.array([2]))
        with db.snapshot() as snap:
            n = snap.vertex_id_bound
            assert n > 70
            depth = snap.bfs(0)
            assert len(depth) == n and depth[1] == 1 and depth[2] == stratagraph.UNREACHABLE
            assert depth[5] == stratagraph.UNREACHABLE
            pr = snap.pagerank()
            assert pr[5] == 0 and abs(pr.sum() - 1) < 1e-6
            assert snap.wcc()[5] == stratagraph.NO_LABEL
            assert np.isinf(snap.sssp(0)[5])
