"""Which scene shows which model (``Viewer.add``), and the models the CLI's scene names stand for."""

from __future__ import annotations

SCENES = ("chain", "constraints", "skeleton", "arm", "take")


def make(viewer, model, kind: str | None = None, **options):
    """The scene for ``model``: ``kind`` one of ``SCENES``, or None to pick by the model's type."""
    from fabrik.model.arm import Arm
    from fabrik.model.chain import Chain
    from fabrik.model.skeleton import Skeleton

    if kind is not None and kind not in SCENES:
        raise ValueError(f"kind must be one of {', '.join(SCENES)}, got {kind!r}")
    if kind is None:
        if isinstance(model, Chain):
            kind = "constraints" if model.constraints else "chain"
        elif isinstance(model, Skeleton):
            kind = "skeleton"
        elif isinstance(model, Arm):
            kind = "arm"
        else:
            raise ValueError(f"model must be a fabrik.Chain, Skeleton or Arm (or kind='take' with a .bvh or .npz "
                             f"path), got {type(model).__name__}")
    if kind in ("chain", "constraints"):
        from fabrik.viz.viewer.chain import ChainScene, demo_limited_chain

        if model is None and kind == "constraints":
            model = demo_limited_chain()
        elif model is None:
            from fabrik.models import table1_chain

            model = table1_chain()
        return _scene(ChainScene, kind, viewer, model, options)
    if kind == "skeleton":
        from fabrik.viz.viewer.skeleton import SkeletonScene
        import fabrik.models

        return _scene(SkeletonScene, kind, viewer, fabrik.models.humanoid() if model is None else model, options)
    if kind == "arm":
        from fabrik.viz.viewer.arm import ArmScene
        import fabrik.models

        return _scene(ArmScene, kind, viewer, fabrik.models.dhm_arm() if model is None else model, options)
    from fabrik.viz.viewer.take import TakeScene

    if model is None:
        raise ValueError("the take scene needs a take: a .bvh file or an .npz of joint positions")
    return _scene(TakeScene, kind, viewer, model, options)


def _scene(cls, kind: str, viewer, model, options: dict):
    """``cls(viewer, model, **options)``; a ValueError naming the options the scene takes for one
    it does not (``fabrik view take --tol``, ``fabrik.view(path, kind="take", tol=...)`` raised
    TypeError)."""
    import inspect

    takes = [name for name, p in inspect.signature(cls.__init__).parameters.items() if p.kind == p.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise ValueError(f"the {kind} scene takes no option {', '.join(unknown)}; it takes {', '.join(takes)}")
    return cls(viewer, model, **options)
