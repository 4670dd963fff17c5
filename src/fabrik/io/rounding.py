"""How much rounding the coordinates a motion file records carry: the margins ``fabrik.mocap``
(BVH position channels) and ``fabrik.io.positions`` (joint positions) judge fixed bones by."""

#: Position channels of a motion read from a file are a fixed bone while they vary by at most this
#: many times the rounding their printed digits and the file's coordinates allow
#: (``fabrik.mocap.takes._fixed_bone_tolerances``).
PRINT_MARGIN = 4.0
#: Single precision's relative rounding (half its spacing, 2**-24): exporters compute the
#: translations they print in float32, so a file's coordinates are taken as rounded by at least
#: this fraction of their size, however many digits they are printed with.
FLOAT32_ROUNDING = 2.0 ** -24
