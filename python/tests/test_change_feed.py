"""The change feed (docs/change-feed.md) from Python: pull subscriptions yielding numpy
structured chunks, durable positions."""

import threading

import numpy as np
import pytest

import stratagraph


def drain(feed, want, timeout=10.0):
    """Records until `want` of them arrived (poll with a timeout so a bug cannot hang)."""
    got = []
    while sum(len(c) for c in got) < want:
        chunk = feed.poll(timeout=timeout)
        assert len(chunk) > 0, "timed out waiting for change records"
        got.append(chunk)
    return np.concatenate(got)


def kinds(recs):
    return [stratagraph.CHANGE_KINDS[k] for k in recs["kind"].tolist()]


def test_live_records_in_order(tmp_path):
    with stratagraph.open(str(tmp_path / "g"), weighted=True) as db:
        feed = db.subscribe()
        assert not feed.durable
        db.insert_edges(np.array([0, 1]), np.array([1, 2]), np.array([0.5, 1.5]))
        db.insert_edges(np.array([0]), np.array([1]), np.array([2.5]))  # overwrite
        db.delete_edges(np.array([1, 5]), np.array([2, 6]))  # (5, 6) absent: no record
        db.add_vertices(np.array([7]))
        recs = drain(feed, 5)
        assert recs.dtype.names == ("ts", "kind", "u", "v", "old_weight", "new_weight")
        assert kinds(recs) == ["insert_edge", "insert_edge", "overwrite_edge", "delete_edge",
                               "add_vertex"]
        assert recs["u"].tolist() == [0, 1, 0, 1, 7]
        assert recs["v"].tolist() == [1, 2, 1, 2, 0]
        assert recs["new_weight"].tolist()[:3] == [0.5, 1.5, 2.5]
        assert recs["old_weight"][2] == 0.5 and recs["old_weight"][3] == 1.5
        ts = recs["ts"].tolist()
        assert ts == sorted(ts) and ts[0] == ts[1] < ts[2] < ts[3] < ts[4]
        assert feed.delivered_ts == ts[-1]
        assert len(feed.poll(timeout=0.05)) == 0  # nothing more: empty after the timeout
        feed.close()
        with pytest.raises(stratagraph.InvalidArgumentError, match="closed"):
            feed.delivered_ts
        assert list(feed) == []


def test_iteration_across_threads_and_close(tmp_path):
    db = stratagraph.open(str(tmp_path / "g"))
    feed = db.subscribe()
    seen = []

    def consume():
        for chunk in feed:  # blocks (GIL released) until records come or the DB closes
            seen.extend(zip(chunk["u"].tolist(), chunk["v"].tolist()))

    t = threading.Thread(target=consume)
    t.start()
    for i in range(50):
        db.insert_edges(np.array([i]), np.array([i + 1]))
    while len(seen) < 50:
        t.join(0.01)
    db.close()  # ends the subscription: the iterator stops
    t.join(10)
    assert not t.is_alive()
    assert seen == [(i, i + 1) for i in range(50)]


def test_durable_position(tmp_path):
    path = str(tmp_path / "g")
    with stratagraph.open(path, wal="sync") as db:
        feed = db.subscribe("s1")
        assert feed.durable
        db.insert_edges(np.array([0, 1]), np.array([1, 2]))
        recs = drain(feed, 2)
        db.commit_position("s1", int(recs["ts"][-1]))
        assert db.position("s1") == int(recs["ts"][-1])
        with pytest.raises(stratagraph.BusyError):
            db.subscribe("s1")
        feed.close()
        db.insert_edges(np.array([2]), np.array([3]))
    with stratagraph.open(path, wal="sync") as db:
        with db.subscribe("s1") as feed:  # resumes after its position: the WAL replays (2, 3)
            recs = drain(feed, 1)
            assert recs["u"].tolist() == [2] and recs["v"].tolist() == [3]
            assert kinds(recs) == ["put_edge"]
        db.drop_subscription("s1")
        assert db.position("s1") is None
        assert db.position("nope") is None


def test_feed_errors(tmp_path):
    with stratagraph.open(str(tmp_path / "g"), wal="off") as db:
        with pytest.raises(stratagraph.NotSupportedError):
            db.subscribe("durable")
        with pytest.raises(ValueError):
            db.subscribe(overflow="drop")
