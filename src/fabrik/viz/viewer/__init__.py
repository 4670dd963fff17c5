"""``fabrik view``: a browser viewer (viser) for chains, limits, skeletons, arms and takes.

From Python::

    import fabrik
    fabrik.view(fabrik.models.humanoid())             # serves http://127.0.0.1:8080/ until Ctrl-C
    v = fabrik.view(chain, block=False); scene = v.scenes[0]; scene.set_target([1, 2, 0]); v.stop()

Scenes: ``ChainScene`` (a chain or, with limits, the ``constraints`` scene), ``SkeletonScene``,
``ArmScene``, ``TakeScene``. Each one's drag handler (``set_target``, ``move_target``,
``show_frame``) can be called directly, as the tests and ``benchmarks/viewer_loop.py`` do.
Loopback by default; docs/viewer.md is the reference.
"""

from fabrik.viz.viewer.server import DEFAULT_HOST, DEFAULT_PORT, Viewer, is_loopback, view

__all__ = ["Viewer", "view", "is_loopback", "DEFAULT_HOST", "DEFAULT_PORT"]
