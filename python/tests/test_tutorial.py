"""The tutorial of docs/python.md runs (its first code block, on a smaller graph; the plotting
block is not run)."""

import pathlib
import re

import numpy as np

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_tutorial_ingest_and_pagerank(tmp_path, capsys):
    text = DOC.read_text()
    tutorial = text[text.index("## Tutorial"):]
    code = re.search(r"```python\n(.*?)```", tutorial, re.S).group(1)
    assert "rmat(18, 16)" in code and "/tmp/rmat18" in code
    code = code.replace("rmat(18, 16)", "rmat(10, 8)").replace("/tmp/rmat18", str(tmp_path / "g"))
    scope = {}
    exec(compile(code, str(DOC), "exec"), scope)
    out = capsys.readouterr().out
    assert "top 10 by PageRank" in out
    deg = scope["out_deg"]
    assert deg.sum() == int(re.search(r"(\d+) edges", out).group(1))
    assert abs(scope["rank"].sum() - 1) < 1e-6
    assert len(np.unique(scope["src"] * 1024 + scope["dst"])) == deg.sum()
