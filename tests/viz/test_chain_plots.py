"""Pictures of chain solutions (``fabrik.viz.chains``)."""

from pathlib import Path

import numpy as np
import pytest

import fabrik


def test_chain_picture_has_equal_axis_scales(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from fabrik.viz import chains

    grabbed = {}

    def keep(fig, path):
        grabbed["fig"] = fig
        return Path(path)

    monkeypatch.setattr(chains, "save", keep)
    chain = fabrik.Chain.straight(4)
    sols = [fabrik.solve(chain, [2.0, 0.5, 0.0])]
    chains.plot_chain_solutions(chain.rest_positions, sols, [np.array([2.0, 0.5, 0.0])], tmp_path / "c.png")
    ax3 = [ax for ax in grabbed["fig"].axes if ax.name == "3d"][0]
    spans = [np.diff(lim)[0] for lim in (ax3.get_xlim(), ax3.get_ylim(), ax3.get_zlim())]
    np.testing.assert_allclose(spans, spans[0], rtol=1e-9)
    assert spans[0] >= 3.0  # the chain's 3-unit height fits
    assert chains.cube_limits(np.array([[0.0, 0, 0], [1, 2, 4]]), margin=0.0) == [(-1.5, 2.5), (-1.0, 3.0), (0.0, 4.0)]
