"""Mapped stores (`strata ingest --ids map`): external IDs in and out, kernels as (ids, values),
checked against NetworkX on the same external-ID graph."""

import subprocess

import networkx as nx
import numpy as np
import pytest

import stratagraph
from conftest import random_edges, strata_binary

N, M = 60, 200
# Large, sparse external IDs, one above 2**63 (uint64 only).
EXT = np.array([10**12 + 7919 * k * k for k in range(N - 1)] + [2**63 + 5], dtype=np.uint64)


def ingest_mapped(path, src, dst, directed=True):
    strata = strata_binary()
    if strata is None:
        pytest.skip("the strata CLI binary was not built")
    el = path.parent / (path.name + ".el")
    el.write_text("".join(f"{u} {v}\n" for u, v in zip(src.tolist(), dst.tolist())))
    subprocess.run([strata, "ingest", "--db", str(path), "--input", str(el), "--format", "el",
                    "--ids", "map", "--directed" if directed else "--undirected",
                    "--wal", "off", "--progress", "never"],
                   check=True, capture_output=True)


@pytest.fixture(scope="module", params=["directed", "undirected"])
def mapped(request, tmp_path_factory):
    directed = request.param == "directed"
    s, d = random_edges(N, M, seed=7)
    src, dst = EXT[s], EXT[d]
    path = tmp_path_factory.mktemp("mapped") / "g"
    ingest_mapped(path, src, dst, directed)
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    db = stratagraph.open(str(path), directed=directed)
    snap = db.snapshot()
    yield db, snap, g
    db.close()


def test_mapped_basics(mapped):
    db, snap, g = mapped
    assert db.mapped and snap.mapped
    verts = snap.vertices()
    assert verts.dtype == np.uint64
    assert verts.tolist() == sorted(g.nodes)
    u, v = next(iter(g.edges))
    assert snap.has_vertex(u) and not snap.has_vertex(12345)
    assert snap.has_edge(u, v) and not snap.has_edge(u, 12345)
    assert snap.weight(u, 12345) is None
    assert snap.degree(12345) == 0
    for x in list(g.nodes)[:10]:
        nbrs = g.successors(x) if g.is_directed() else g.neighbors(x)
        assert sorted(snap.neighbors(x).tolist()) == sorted(nbrs)
        assert snap.degree(x) == len(list(g.successors(x) if g.is_directed() else g.neighbors(x)))
    with pytest.raises(stratagraph.NotFoundError, match="unknown vertex 12345"):
        snap.neighbors(12345)
    ids, deg = snap.degrees()
    assert ids.tolist() == sorted(g.nodes)
    want = g.out_degree if g.is_directed() else g.degree
    assert deg.tolist() == [want[x] for x in ids.tolist()]
    es = set()
    for s_, d_ in snap.edges(chunk_size=17):
        es.update(zip(s_.tolist(), d_.tolist()))
    h = stratagraph.to_networkx(snap)  # external IDs too
    assert sorted(h.nodes) == sorted(g.nodes) and nx.utils.graphs_equal(h, g)
    if g.is_directed():
        assert es == set(g.edges)
    else:
        assert {frozenset(e) for e in es} == {frozenset(e) for e in g.edges}


def test_mapped_kernels(mapped):
    db, snap, g = mapped
    nodes = sorted(g.nodes)
    source = int(EXT[0]) if EXT[0] in g else nodes[0]

    ids, depth = snap.bfs(source)
    assert ids.dtype == np.uint64 and ids.tolist() == nodes
    want = nx.single_source_shortest_path_length(g, source)
    assert depth.tolist() == [want.get(x, stratagraph.UNREACHABLE) for x in nodes]

    ids, dist = snap.sssp(source)
    assert ids.tolist() == nodes
    assert [d for d in dist.tolist()] == [float(want[x]) if x in want else np.inf for x in nodes]

    ids, rank = snap.pagerank(iterations=200)
    nx_pagerank = getattr(nx.algorithms.link_analysis.pagerank_alg, "_pagerank_python",
                          nx.pagerank)
    pr = nx_pagerank(g, alpha=0.85, tol=1e-13, max_iter=1000, weight=None)
    np.testing.assert_allclose(rank, [pr[x] for x in ids.tolist()], rtol=1e-6, atol=0)

    ids, label = snap.wcc()
    comps = nx.weakly_connected_components(g) if g.is_directed() else nx.connected_components(g)
    got = {}
    for x, lab in zip(ids.tolist(), label.tolist()):
        got.setdefault(lab, set()).add(x)
    assert sorted(map(sorted, got.values())) == sorted(map(sorted, comps))
    # Labels are external IDs of members of the component.
    assert all(lab in members for lab, members in got.items())

    ids, lcc = snap.lcc()
    want_lcc = nx.clustering(g if not g.is_directed() else g.to_undirected())
    if not g.is_directed():
        np.testing.assert_allclose(lcc, [want_lcc[x] for x in ids.tolist()], rtol=1e-12)

    ids, lab = snap.cdlp(iterations=5)
    assert ids.tolist() == nodes and set(lab.tolist()) <= set(nodes)

    reach = snap.khop(source, k=2)
    want2 = nx.single_source_shortest_path_length(g, source, cutoff=2)
    assert reach.tolist() == sorted(want2)

    with pytest.raises(stratagraph.NotFoundError, match="unknown vertex 12345"):
        snap.bfs(12345)


def test_mapped_store_is_read_only_for_python(mapped):
    db, snap, g = mapped
    with pytest.raises(stratagraph.NotSupportedError, match="ids=map"):
        db.insert_edges(np.array([1], np.uint64), np.array([2], np.uint64))
    with pytest.raises(stratagraph.NotSupportedError, match="strata ingest"):
        db.add_vertices(np.array([1], np.uint64))
    b = stratagraph.WriteBatch()
    b.insert_edge(1, 2)
    with pytest.raises(stratagraph.NotSupportedError):
        db.write(b)


def test_dense_store_is_not_mapped(tmp_path):
    with stratagraph.open(str(tmp_path / "d")) as db:
        assert not db.mapped
        db.insert_edges(np.array([0]), np.array([1]))
        with db.snapshot() as snap:
            assert not snap.mapped and snap.pagerank().shape == (snap.vertex_id_bound,)


def test_bad_idmode(tmp_path):
    path = tmp_path / "b"
    stratagraph.open(str(path)).close()
    (path / "IDMODE").write_text("ids=sparse\n")
    with pytest.raises(stratagraph.CorruptionError, match="expected 'ids=dense' or 'ids=map'"):
        stratagraph.open(str(path))
    (path / "IDMODE").write_text("ids=map\n")
    # Mapped, no vertices, no IDDICT (a first ingest stopped before creating it): nothing to
    # map, so it opens, empty.
    with stratagraph.open(str(path)) as db:
        with db.snapshot() as snap:
            assert snap.mapped and snap.vertex_id_bound == 0
    (path / "IDMODE").write_text("ids=dense\n")
    with stratagraph.open(str(path)) as db:
        db.insert_edges(np.array([0]), np.array([1]))
    # With vertices, their external IDs are gone: refused.
    (path / "IDMODE").write_text("ids=map\n")
    with pytest.raises(stratagraph.CorruptionError, match="holds vertices, but has no IDDICT"):
        stratagraph.open(str(path))
    # The failed opens released the store.
    (path / "IDMODE").write_text("ids=dense\n")
    stratagraph.open(str(path)).close()


def test_idmode_gone_beside_an_iddict_is_refused(tmp_path):
    """A mapped store whose IDMODE is deleted or says dense: opened as dense, every external ID
    would have been read as an internal one (and writes allowed). Refused, naming IDMODE."""
    s, d = random_edges(N, M, seed=3)
    path = tmp_path / "m"
    ingest_mapped(path, EXT[s], EXT[d])
    (path / "IDMODE").unlink()
    with pytest.raises(stratagraph.CorruptionError, match="IDMODE: missing, but .*IDDICT exists"):
        stratagraph.open(str(path))
    (path / "IDMODE").write_text("ids=dense\n")
    with pytest.raises(stratagraph.CorruptionError, match="says ids=dense"):
        stratagraph.open(str(path))
    (path / "IDMODE").write_text("ids=map\n")
    with stratagraph.open(str(path)) as db:
        assert db.mapped


def test_both_id_files_gone_is_refused(tmp_path):
    """A mapped store without IDMODE and IDDICT looked dense: every external ID would have been
    read as an internal one. The manifest records that the store keeps both; refused, naming
    the file, until it is back."""
    s, d = random_edges(N, M, seed=4)
    path = tmp_path / "m"
    ingest_mapped(path, EXT[s], EXT[d])
    idmode = (path / "IDMODE").read_bytes()
    iddict = (path / "IDDICT").read_bytes()
    (path / "IDMODE").unlink()
    (path / "IDDICT").unlink()
    with pytest.raises(stratagraph.CorruptionError,
                       match="IDMODE: missing; the manifest records that the store keeps"):
        stratagraph.open(str(path))
    (path / "IDMODE").write_bytes(idmode)
    with pytest.raises(stratagraph.CorruptionError,
                       match="IDDICT: missing; the manifest records that the store keeps"):
        stratagraph.open(str(path))
    (path / "IDDICT").write_bytes(iddict)
    with stratagraph.open(str(path)) as db:
        assert db.mapped


def test_another_stores_iddict_is_refused(tmp_path):
    """Another mapped store's IDDICT copied in: its IDs would answer for other vertices."""
    s, d = random_edges(N, M, seed=5)
    a, b = tmp_path / "a", tmp_path / "b"
    ingest_mapped(a, EXT[s], EXT[d])
    ingest_mapped(b, EXT[d], EXT[s])
    own = (b / "IDDICT").read_bytes()
    (b / "IDDICT").write_bytes((a / "IDDICT").read_bytes())
    with pytest.raises(stratagraph.CorruptionError, match="belongs to another store"):
        stratagraph.open(str(b))
    (b / "IDDICT").write_bytes(own)
    with stratagraph.open(str(b)) as db:
        assert db.mapped


def test_mapped_view(mapped):
    db, snap, g = mapped
    keep = sorted(g.nodes)[::2]
    name = "half_" + ("d" if g.is_directed() else "u")
    db.create_view(name, vertices=np.array(keep, dtype=np.uint64), replace=True)
    sub = g.subgraph(keep)
    with db.snapshot(view=name) as vs:
        assert vs.mapped and vs.vertices().tolist() == keep
        ids, deg = vs.degrees()
        want = sub.out_degree if sub.is_directed() else sub.degree
        assert deg.tolist() == [want[x] for x in ids.tolist()]
    with pytest.raises(stratagraph.NotFoundError, match="unknown vertex 12345"):
        db.create_view("bad", vertices=np.array([12345], dtype=np.uint64))
