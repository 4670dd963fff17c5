"""The paper's experiments, built on the ``fabrik`` library and run by ``fabrik bench``,
``fabrik reconstruct`` and ``fabrik demo``: Table 1 (``table1``: one chain, many targets),
tracking (``tracking``), the constrained chain (``constrained``, Fig. 18), Table 2
(``reconstruction``: whole bodies rebuilt from a few joints with every method, its records,
tables and pooling in ``reconstruction_report``), a procedural walk for the demo and the
tests (``sample_motion``), and a take re-exported as other rigs would export it
(``rig_variants``: other names, axes, units, channels, rest poses; issue 29's invariance sweep). The motion-capture features users call live in ``fabrik.mocap``.
"""
