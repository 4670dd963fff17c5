"""A single chain: reach, warm-start, move the root, and read the result.

Run from the repository root:  .venv/bin/python examples/01_single_chain.py
"""

import numpy as np

import fabrik


def main() -> None:
    # Four joints, root first, 1 unit apart along +Y. Units follow the data.
    chain = fabrik.Chain.from_positions(np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0.0]]))
    print(chain)

    sol = fabrik.solve(chain, [1.0, 1.5, 0.5], tol=1e-6)
    print("reachable:  ", sol)
    print("bone lengths kept:", np.linalg.norm(np.diff(sol.positions, axis=0), axis=1))

    # The next target starts from the last pose (what an animation or a tracker does).
    nxt = fabrik.solve(chain, [1.1, 1.4, 0.6], initial=sol.positions, tol=1e-6)
    print("warm start: ", nxt)

    # Beyond reach: the chain points straight at the target, in one pass.
    far = fabrik.solve(chain, [10.0, 0.0, 0.0])
    print("unreachable:", far, "effector at", far.positions[-1])

    # The moving-root case: the root is placed at `root` exactly.
    moved = fabrik.solve(chain, [1.0, 1.5, 0.5], root=[0.5, 0.0, 0.0], tol=1e-6)
    print("moved root: ", moved, "root at", moved.positions[0])

    # Every method behind the same entry point.
    for method in fabrik.methods():
        if method.endswith("-constrained"):
            continue
        s = fabrik.solve(chain, [1.0, 1.5, 0.5], method=method, tol=1e-6)
        print(f"  {method:<24} {s.status:<12} {s.iterations:>5} iterations  error {s.error:.1e}")


if __name__ == "__main__":
    main()
