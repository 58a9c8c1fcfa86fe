"""Views (docs/views.md) from Python: create / list / drop, and kernels on a view's snapshot
against NetworkX on the same subgraph."""

import networkx as nx
import numpy as np
import pytest

import stratagraph
from conftest import make_store, random_edges

N, M = 40, 150


@pytest.fixture
def store(tmp_path):
    src, dst = random_edges(N, M, seed=3)
    w = np.random.default_rng(3).uniform(0, 10, size=len(src))
    db = make_store(tmp_path / "g", N, src, dst, w)
    g = nx.DiGraph()
    g.add_nodes_from(range(N))
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        g.add_edge(u, v, weight=x)
    yield db, g
    db.close()


def test_view_filters_match_subgraph(store):
    db, g = store
    keep = np.arange(0, N, 2, dtype=np.uint64)  # even vertices
    db.create_view("even", vertices=keep)
    db.create_view("heavy", weight_range=(5.0, 10.0))
    sub = g.subgraph(keep.tolist()).copy()
    heavy = nx.DiGraph()
    heavy.add_nodes_from(g.nodes)
    heavy.add_edges_from((u, v) for u, v, x in g.edges(data="weight") if 5.0 <= x <= 10.0)

    with db.snapshot(view="even") as snap:
        assert snap.view == "even"
        assert snap.vertices().tolist() == sorted(sub.nodes)
        assert snap.num_edges() == sub.number_of_edges()
        src = int(keep[0])
        depth = snap.bfs(src)
        want = nx.single_source_shortest_path_length(sub, src)
        for v in sub.nodes:
            assert depth[v] == want.get(v, stratagraph.UNREACHABLE)
        label = snap.wcc()
        for comp in nx.weakly_connected_components(sub):
            assert len({int(label[v]) for v in comp}) == 1
        assert len({int(label[v]) for v in sub.nodes}) == nx.number_weakly_connected_components(sub)
        assert sorted(snap.neighbors(src).tolist()) == sorted(sub.successors(src))
        assert not snap.has_vertex(1)

    with db.snapshot(view="heavy") as snap:
        es = set()
        for s_, d_ in snap.edges():
            es.update(zip(s_.tolist(), d_.tolist()))
        assert es == set(heavy.edges)
        pr = snap.pagerank(iterations=200)[:N]
        nx_pagerank = getattr(nx.algorithms.link_analysis.pagerank_alg, "_pagerank_python",
                              nx.pagerank)
        want = nx_pagerank(heavy, alpha=0.85, tol=1e-13, max_iter=1000, weight=None)
        np.testing.assert_allclose(pr, [want[v] for v in range(N)], rtol=1e-6, atol=0)


def test_view_edges_and_set_operations(store):
    db, g = store
    edges = list(g.edges)[:20]
    src = np.array([u for u, _ in edges], np.uint64)
    dst = np.array([v for _, v in edges], np.uint64)
    db.create_view("some", edges=(src, dst))
    db.create_view("rest", exclude_edges=(src, dst))
    db.create_view("all", union=["some", "rest"])
    db.create_view("none", intersection=["some", "rest"])
    db.create_view("diff", difference=["all", "rest"])
    names = [v["name"] for v in db.views()]
    assert names == sorted(["some", "rest", "all", "none", "diff"])
    kinds = {v["name"]: v["kind"] for v in db.views()}
    assert kinds["all"] == "union" and kinds["some"] == "filter"
    assert {v["name"]: v["operands"] for v in db.views()}["diff"] == ["all", "rest"]

    def edge_set(view):
        with db.snapshot(view=view) as snap:
            out = set()
            for s_, d_ in snap.edges():
                out.update(zip(s_.tolist(), d_.tolist()))
            return out

    assert edge_set("some") == set(edges)
    assert edge_set("rest") == set(g.edges) - set(edges)
    assert edge_set("all") == set(g.edges)
    assert edge_set("none") == set()
    assert edge_set("diff") == set(edges)

    with pytest.raises(stratagraph.InvalidArgumentError):
        db.create_view("some", weight_range=(0.0, 1.0))
    db.create_view("some", weight_range=(0.0, 1.0), replace=True)
    with pytest.raises(stratagraph.InvalidArgumentError):
        db.drop_view("some")  # "all" uses it
    db.drop_view("diff")
    db.drop_view("all")
    db.drop_view("none")
    db.drop_view("some")
    assert [v["name"] for v in db.views()] == ["rest"]
    with pytest.raises(stratagraph.NotFoundError):
        db.drop_view("some")
    with pytest.raises(stratagraph.NotFoundError):
        db.snapshot(view="some")


def test_view_argument_errors(store):
    db, _ = store
    with pytest.raises(ValueError):
        db.create_view("x", vertices=np.array([1]), union=["a", "b"])
    with pytest.raises(ValueError):
        db.create_view("x", edges=(np.array([1]), np.array([2])),
                       exclude_edges=(np.array([1]), np.array([2])))
    with pytest.raises(TypeError):
        db.create_view("x", edges=np.array([[1, 2], [3, 4]]))
    with pytest.raises(stratagraph.InvalidArgumentError):
        db.create_view("bad name!", vertices=np.array([1]))
    with pytest.raises(stratagraph.InvalidArgumentError):
        db.create_view("x", vertices=np.array([-1]))


def test_views_persist(tmp_path):
    path = str(tmp_path / "p")
    db = make_store(path, 5, np.array([0, 1, 2]), np.array([1, 2, 3]))
    db.create_view("v", vertices=np.array([0, 1, 2]))
    db.close()
    with stratagraph.open(path, wal="off") as db:
        assert [v["name"] for v in db.views()] == ["v"]
        with db.snapshot(view="v") as snap:
            assert snap.num_edges() == 2
