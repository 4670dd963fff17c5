"""What a pose target's form costs: one ``fabrik.solve`` on the DHM arm (``fabrik.models.dhm_arm``)
with the target's rotation as a (3, 3) matrix, a scipy ``Rotation``, a quaternion through
``fabrik.quat_xyzw`` / ``fabrik.quat_wxyz`` (the conversion inside the timed call), and the whole
pose as a (4, 4) transform.

    PYTHONPATH=src python benchmarks/target_forms.py [--rounds 200] [--arm dhm|URDF --tip LINK]

The forms take turns call by call (so that a busy spell of the machine falls on all of them);
per form the median and the 10th percentile of ``time.perf_counter`` around the call over
``rounds`` rounds of 50 calls each, in microseconds, and the answers compared (the same joint
values to 1e-12 for every form).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.spatial.transform import Rotation

import fabrik


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--arm", default="dhm", help="dhm (the DHM arm) or a URDF file")
    p.add_argument("--tip", default=None)
    args = p.parse_args(argv)
    arm = fabrik.models.dhm_arm() if args.arm == "dhm" else fabrik.load_urdf(args.arm, tip=args.tip)
    rng = np.random.default_rng(5)
    q = arm.random_angles(rng, 50)
    positions, frames = fabrik.forward(arm, q)
    cases = []
    for k in range(50):
        p_k, r_k = positions[k, -1].copy(), frames[k, -1].copy()
        rot = Rotation.from_matrix(r_k)
        xyzw = rot.as_quat()
        wxyz = np.r_[xyzw[3], xyzw[:3]]
        t = np.eye(4)
        t[:3, :3], t[:3, 3] = r_k, p_k
        cases.append({"matrix": lambda p_k=p_k, r_k=r_k: (p_k, r_k),
                      "Rotation": lambda p_k=p_k, rot=rot: (p_k, rot),
                      "quat_xyzw": lambda p_k=p_k, xyzw=xyzw: (p_k, fabrik.quat_xyzw(xyzw)),
                      "quat_wxyz": lambda p_k=p_k, wxyz=wxyz: (p_k, fabrik.quat_wxyz(wxyz)),
                      "4x4": lambda t=t: t})
    forms = list(cases[0])
    tol = 1e-3 * arm.reach
    answers = {f: [fabrik.solve(arm, c[f](), tol=tol).joint_angles for c in cases] for f in forms}  # compile, warm
    agree = max(float(np.abs(np.array(answers[f]) - np.array(answers["matrix"])).max()) for f in forms)
    times = {f: [] for f in forms}
    perf = time.perf_counter
    for _ in range(args.rounds):
        for c in cases:
            for f in forms:
                make = c[f]
                began = perf()
                fabrik.solve(arm, make(), tol=tol)
                times[f].append(perf() - began)
    print(f"{arm!r}: one fabrik.solve per pose target, {args.rounds} x {len(cases)} calls per form, taking turns")
    print(f"{'form':<12}{'median us':>11}{'p10 us':>9}")
    for f in forms:
        t = np.array(times[f]) * 1e6
        print(f"{f:<12}{np.median(t):>11.2f}{np.percentile(t, 10):>9.2f}")
    print(f"largest difference between the forms' answers: {agree:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
