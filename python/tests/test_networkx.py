"""to_networkx / from_networkx round trips."""

import networkx as nx
import numpy as np
import pytest

import stratagraph
from conftest import random_edges


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_round_trip(tmp_path, directed, weighted):
    src, dst = random_edges(200, 900, seed=21)
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(210))  # 200..209 isolated
    if weighted:
        w = np.random.default_rng(3).uniform(0.5, 2.0, size=len(src))
        g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
    else:
        g.add_edges_from(zip(src.tolist(), dst.tolist()))
    with stratagraph.from_networkx(g, str(tmp_path / "g"), wal="off") as db:
        assert db.directed == directed and db.weighted == weighted
        with db.snapshot() as snap:
            assert snap.num_vertices() == 210
            h = stratagraph.to_networkx(snap)
    assert h.is_directed() == directed
    assert nx.utils.nodes_equal(h.nodes, g.nodes)
    assert nx.utils.edges_equal(h.edges, g.edges)
    if weighted:
        for u, v, d in g.edges(data=True):
            assert h[u][v]["weight"] == d["weight"]
    else:
        assert all("weight" not in d for _, _, d in h.edges(data=True))


def test_from_networkx_rejects_other_labels_and_full_stores(tmp_path):
    with pytest.raises(stratagraph.InvalidArgumentError, match="non-negative integers"):
        stratagraph.from_networkx(nx.path_graph(["a", "b"]), str(tmp_path / "a"))
    with pytest.raises(stratagraph.InvalidArgumentError, match="non-negative integers"):
        stratagraph.from_networkx(nx.relabel_nodes(nx.path_graph(2), {0: -1}), str(tmp_path / "b"))
    stratagraph.from_networkx(nx.path_graph(3), str(tmp_path / "c")).close()
    with pytest.raises(stratagraph.InvalidArgumentError, match="not empty"):
        stratagraph.from_networkx(nx.path_graph(3), str(tmp_path / "c"))


def test_kernels_on_imported_graph(tmp_path):
    g = nx.karate_club_graph()
    with stratagraph.from_networkx(g, str(tmp_path / "k"), weighted=False) as db:
        with db.snapshot() as snap:
            lcc = snap.lcc()[: g.number_of_nodes()]
            want = nx.clustering(g)
            np.testing.assert_allclose(lcc, [want[v] for v in g], rtol=1e-12)
            assert snap.triangle_count() == sum(nx.triangles(g).values()) // 3
