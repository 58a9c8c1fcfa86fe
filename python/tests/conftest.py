"""Shared helpers of the stratagraph pytest suite: random graphs and stores holding them."""

import numpy as np
import pytest

import stratagraph


def random_edges(n, m, seed, self_loops=False):
    """m distinct random edges over vertices [0, n) as (src, dst) uint64 arrays."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, size=3 * m, dtype=np.uint64)
    dst = rng.integers(0, n, size=3 * m, dtype=np.uint64)
    if not self_loops:
        keep = src != dst
        src, dst = src[keep], dst[keep]
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
    pairs = pairs[rng.permutation(len(pairs))[:m]]
    return pairs[:, 0].copy(), pairs[:, 1].copy()


KINDS = {
    "directed": dict(directed=True),
    "in_edges": dict(directed=True, in_edges=True),
    "undirected": dict(directed=False),
}


@pytest.fixture(params=sorted(KINDS))
def kind(request):
    return request.param


def make_store(path, n, src, dst, weights=None, **open_args):
    """A store at path with vertices [0, n) (isolated ones too) and the given edges."""
    db = stratagraph.open(str(path), weighted=weights is not None, wal="off", **open_args)
    db.add_vertices(np.arange(n, dtype=np.uint64))
    db.insert_edges(src, dst, weights)
    return db


def strata_binary():
    """The CLI binary of the build the package comes from (<build>/bin/strata), or $STRATA_BIN;
    None when there is none (tests that need it skip)."""
    import os
    from pathlib import Path

    env = os.environ.get("STRATA_BIN")
    if env:
        return env
    # <build>/python/stratagraph/_core*.so -> <build>/bin/strata
    p = Path(stratagraph._core.__file__).resolve().parents[2] / "bin" / "strata"
    return str(p) if p.exists() else None
