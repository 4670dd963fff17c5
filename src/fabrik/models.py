"""Ready-made models from the paper's examples.

* :func:`table1_chain` - the chain of the paper's Table 1 experiment: 10 joints, 9 bones of 100
  units, straight along +Y from the origin (section 5.1).
* :func:`y_shape` - the 'Y-shaped' multibody of Fig. 15(a): 10 joints, 2 end effectors.
* :func:`hand` - the unconstrained hand of Fig. 15(b): 26 joints, 5 end effectors (finger tips).
* :func:`humanoid` - the tracked humanoid of Figs. 16/17: 13 joints, 5 end effectors (head,
  hands, feet).
* :func:`dhm_arm` - the 7-joint human arm of Lamb et al.'s FABRIK-for-DHM pilot study (its
  Table 1, a DH table), as a ``fabrik.Arm``, in centimetres.

The first three are ``fabrik.Skeleton`` objects in their rest pose, right-handed with +Y up. The
hand and the humanoid are in metres with adult human proportions; the Y shape is in units of its
bone length. Each function documents its joint names; ``skeleton.leaves`` gives the end effectors.
"""

import math as _math

import numpy as _np

from fabrik._validation import check_positive as _check_positive
from fabrik.model.chain import Chain as _Chain
from fabrik.model.skeleton import Skeleton


def table1_chain(n_joints: int = 10, bone_length: float = 100.0) -> _Chain:
    """The Table 1 chain (section 5.1): ``n_joints`` joints, straight along +Y from the origin,
    bones of ``bone_length`` (the paper: 10 joints, bones of 100 units)."""
    return _Chain.straight(n_joints, bone_length, dim=3, axis=1)


def y_shape(bone_length: float = 1.0, branch_angle: float = _math.radians(30.0)) -> Skeleton:
    """The 'Y-shaped' multibody of section 5.2 / Fig. 15(a): 10 joints, 2 end effectors.

    A trunk of 3 bones straight up (+Y) from the root to a fork (the sub-base), then two branches
    of 3 bones each, leaning ``branch_angle`` radians (default 30 degrees) either side of
    vertical in the z = 0 plane; the left branch (-X) curls slightly inwards to avoid a perfectly
    straight chain.

    Joints (in order): ``root``, ``trunk1``, ``trunk2``, ``fork``, ``left1``, ``left2``,
    ``left_tip``, ``right1``, ``right2``, ``right_tip``. End effectors: ``left_tip``,
    ``right_tip``. Units: every bone is ``bone_length`` long (default 1).
    """
    bone_length = _check_positive(bone_length, "bone_length")
    if isinstance(branch_angle, (str, bytes, bool)) or not (0.0 < branch_angle < _math.pi / 2):
        raise ValueError(f"branch_angle must be in (0, pi/2) radians, got {branch_angle!r}")
    names = ["root", "trunk1", "trunk2", "fork", "left1", "left2", "left_tip", "right1", "right2", "right_tip"]
    parents = [-1, 0, 1, 2, 3, 4, 5, 3, 7, 8]
    offsets = _np.zeros((10, 3))
    offsets[1:4, 1] = bone_length
    bend = _math.radians(5.0)
    for first, side in ((4, -1.0), (7, 1.0)):
        for b in range(3):
            angle = branch_angle - b * bend  # each bone turns 5 degrees back towards vertical
            offsets[first + b] = bone_length * _np.array([side * _math.sin(angle), _math.cos(angle), 0.0])
    return Skeleton.from_parents(names, parents, offsets)


#: Finger names of :func:`hand`, thumb first.
FINGERS = ("thumb", "index", "middle", "ring", "little")


def hand() -> Skeleton:
    """The hand multibody of section 5.2 / Fig. 15(b): 26 joints, 5 end effectors, in metres.

    The wrist is the root (at the origin) and the sub-base of five chains of five joints each.
    The hand points along +Y with the palm facing -Z and the thumb on the +X side; fingers are
    slightly flexed (towards -Z) and fanned. Segment lengths are those of an adult hand
    (about 0.19 m from the wrist to the middle finger's tip).

    Joints: ``wrist``, then for each finger in ``FINGERS`` order five joints. Fingers
    (``index``, ``middle``, ``ring``, ``little``): ``<f>_carpal`` (base of the metacarpal, in
    the palm), ``<f>_mcp`` (knuckle), ``<f>_pip``, ``<f>_dip``, ``<f>_tip``. Thumb:
    ``thumb_carpal``, ``thumb_cmc``, ``thumb_mcp``, ``thumb_ip``, ``thumb_tip``.
    End effectors: the five ``*_tip`` joints.
    """
    names = ["wrist"]
    parents = [-1]
    positions = [_np.zeros(3)]
    # finger: (base of the metacarpal in the palm, fan angle about Z (radians, + towards +X),
    #          bone lengths metacarpal, proximal, middle, distal)
    specs = {
        "index": ((0.020, 0.025, 0.0), _math.radians(6.0), (0.068, 0.040, 0.024, 0.020)),
        "middle": ((0.004, 0.027, 0.0), _math.radians(0.0), (0.065, 0.045, 0.028, 0.021)),
        "ring": ((-0.012, 0.025, 0.0), _math.radians(-6.0), (0.058, 0.042, 0.027, 0.021)),
        "little": ((-0.026, 0.021, 0.0), _math.radians(-12.0), (0.053, 0.033, 0.019, 0.019)),
    }
    for finger in FINGERS:
        first = len(names)
        if finger == "thumb":
            joint_names = ["thumb_carpal", "thumb_cmc", "thumb_mcp", "thumb_ip", "thumb_tip"]
            base = _np.array([0.016, 0.012, -0.004])
            fan = _math.radians(40.0)
            bones = (0.022, 0.046, 0.032, 0.025)
            flex = _math.radians(8.0)
        else:
            joint_names = [f"{finger}_{part}" for part in ("carpal", "mcp", "pip", "dip", "tip")]
            base_xyz, fan, bones = specs[finger]
            base = _np.array(base_xyz)
            flex = _math.radians(10.0)
        names.extend(joint_names)
        parents.append(0)
        positions.append(base)
        point = base
        for b, length in enumerate(bones):
            bend = flex * b  # metacarpal straight, each phalanx a little more flexed
            direction = _np.array([_math.sin(fan) * _math.cos(bend), _math.cos(fan) * _math.cos(bend), -_math.sin(bend)])
            point = point + length * direction
            parents.append(first + b)
            positions.append(point)
    return Skeleton.from_positions(names, parents, _np.array(positions))


def humanoid() -> Skeleton:
    """The humanoid of section 5.2 / Figs. 16-17: 13 joints, 5 end effectors, in metres.

    A 1.75 m adult standing with arms hanging, +Y up, facing +Z, its left side at +X. The pelvis
    is the root (0.95 m above the floor); the spine is one bone up to the neck, which is the
    sub-base of the head and both arms; the legs hang from the pelvis (the hip joints are folded
    into it, which is how the count stays at 13). Elbows and knees are slightly bent so no limb
    starts perfectly straight.

    Joints (in order): ``pelvis``, ``neck``, ``head``, ``l_shoulder``, ``l_elbow``, ``l_wrist``,
    ``r_shoulder``, ``r_elbow``, ``r_wrist``, ``l_knee``, ``l_ankle``, ``r_knee``, ``r_ankle``.
    End effectors: ``head``, ``l_wrist``, ``r_wrist``, ``l_ankle``, ``r_ankle``.
    """
    names = ["pelvis", "neck", "head",
             "l_shoulder", "l_elbow", "l_wrist", "r_shoulder", "r_elbow", "r_wrist",
             "l_knee", "l_ankle", "r_knee", "r_ankle"]
    parents = [-1, 0, 1, 1, 3, 4, 1, 6, 7, 0, 9, 0, 11]
    offsets = _np.array([
        [0.0, 0.95, 0.0],      # pelvis: its rest position
        [0.0, 0.50, -0.02],    # neck: spine, pelvis to the base of the neck
        [0.0, 0.23, 0.03],     # head: neck to the centre of the head
        [0.19, -0.02, 0.0],    # l_shoulder: clavicle
        [0.03, -0.29, -0.03],  # l_elbow: upper arm
        [0.01, -0.25, 0.05],   # l_wrist: forearm
        [-0.19, -0.02, 0.0],   # r_shoulder
        [-0.03, -0.29, -0.03],  # r_elbow
        [-0.01, -0.25, 0.05],  # r_wrist
        [0.10, -0.46, 0.03],   # l_knee: thigh from the pelvis centre
        [0.0, -0.42, -0.04],   # l_ankle: shank
        [-0.10, -0.46, 0.03],  # r_knee
        [0.0, -0.42, -0.04],   # r_ankle
    ])
    return Skeleton.from_parents(names, parents, offsets)


#: Default stature (cm) of :func:`dhm_arm`, and Winter's segment lengths as fractions of it.
DHM_STATURE_CM = 175.0
WINTER_FRACTIONS = {"upper_arm": 0.186, "forearm": 0.146, "hand": 0.108}

#: Joint names of :func:`dhm_arm`, in DH order (Table 1 joints 1-7).
DHM_JOINTS = ("shoulder_1", "shoulder_2", "shoulder_3", "elbow", "wrist_1", "wrist_2", "wrist_3")


def dhm_arm(upper_arm: float | None = None, forearm: float | None = None, hand: float | None = None, *,
            side: str = "right", height: float | None = None, elbow_max: float = 2.0 * _math.pi / 3.0):
    """The 7-DoF arm of Lamb, Lee, Billing, Hogberg & Yang, "FABRIK Solver for DHM: A Pilot Study"
    (Table 1), as a ``fabrik.Arm`` in centimetres, built with the standard DH convention.

    ====  ===============  ======  =======  =====
    i     theta_i (rad)    d_i     alpha_i  a_i
    ====  ===============  ======  =======  =====
    1     0 + q1           0       pi/2     0
    2     pi/2 + q2        0       pi/2     0
    3     pi/2 + q3        L1      pi/2     0
    4     pi/2 + q4        0       0        L2
    5     0 + q5           0       pi/2     0
    6     pi/2 + q6        0       pi/2     0
    7     0 + q7           L3      0        0
    ====  ===============  ======  =======  =====

    L1 = ``upper_arm`` (shoulder to elbow), L2 = ``forearm`` (elbow to wrist), L3 = ``hand``
    (wrist to the fingertip, the study's end effector). Each defaults to its fraction of the
    stature ``height`` (cm, default 175) in Winter, *Biomechanics and Motor Control of Human
    Movement* (4th ed., Wiley 2009, Fig. 4.1, after Drillis & Contini 1966): upper arm 0.186 H,
    forearm 0.146 H, hand 0.108 H (32.55, 25.55 and 18.9 cm at 175 cm).

    Geometry (``forward`` row k is DH frame k): the shoulder is the base origin and joints 0-2
    turn about it (``spherical_groups()`` is ``((0, 1, 2), (4, 5, 6))``). At q = 0 the arm is
    straight along +x0 and the axes are: shoulder_1 +z0, shoulder_2 -y0, shoulder_3 the upper
    arm's long axis (humeral rotation, for every q), elbow +z0, wrist_1 parallel to the elbow
    axis (for every q: alpha_4 = 0), wrist_2 -y0, wrist_3 the hand's long axis (for every q).
    The DH axes alone do not say which anatomical plane each shoulder and wrist joint moves in
    (that needs the base frame's place on the body), hence the neutral names
    ``shoulder_1..3, elbow, wrist_1..3`` (``DHM_JOINTS``).

    Elbow: theta_4 = pi/2 + q4. The upper arm arrives along +y3, and DH frame 4 puts the forearm
    along x4 = cos(theta_4) x3 + sin(theta_4) y3 = -sin(q4) x3 + cos(q4) y3, so q4 is the
    flexion angle itself: 0 a straight arm, the forearm turning by q4 from the upper arm's line
    (the inner elbow angle is pi - q4). Its limits are [0, ``elbow_max``], radians: by default
    the study's 0-120 degrees (2 pi / 3; the normal range of elbow flexion is 0-150 degrees,
    American Academy of Orthopaedic Surgeons, *Joint Motion: Method of Measuring and Recording*,
    1965); the other joints are unlimited, as in the study.

    ``side="left"`` mirrors the right arm across the base x0-y0 plane
    (``Arm.mirrored([0, 0, 1])``), taking the zero pose's elbow axis z0 as the body's
    medio-lateral axis (it is, in the anatomical position). For the same q the left arm takes
    the mirror posture (positions with z negated), flexing its elbow by the same q4; its axes
    stay +z and its base frame keeps the right arm's axis directions.
    """
    from fabrik.model.arm import Arm

    if side not in ("right", "left"):
        raise ValueError(f"side must be 'right' or 'left', got {side!r}")
    stature = DHM_STATURE_CM if height is None else _check_positive(height, "height")
    lengths = {}
    for name, value in (("upper_arm", upper_arm), ("forearm", forearm), ("hand", hand)):
        lengths[name] = WINTER_FRACTIONS[name] * stature if value is None else _check_positive(value, name)
    half = _math.pi / 2
    rows = [(0.0, 0.0, half, 0.0),
            (half, 0.0, half, 0.0),
            (half, lengths["upper_arm"], half, 0.0),
            (half, 0.0, 0.0, lengths["forearm"]),
            (0.0, 0.0, half, 0.0),
            (half, 0.0, half, 0.0),
            (0.0, lengths["hand"], 0.0, 0.0)]
    elbow_max = _check_positive(elbow_max, "elbow_max")
    if elbow_max > _math.pi:
        raise ValueError(f"elbow_max must be at most pi (radians), got {elbow_max!r}")
    limits = [None, None, None, (0.0, elbow_max), None, None, None]
    arm = Arm.from_dh(rows, limits=limits, names=DHM_JOINTS, base_name=f"{side}_shoulder",
                      tip_name=f"{side}_fingertip")
    return arm if side == "right" else arm.mirrored([0.0, 0.0, 1.0])


__all__ = ["table1_chain", "y_shape", "hand", "humanoid", "dhm_arm", "FINGERS", "DHM_JOINTS", "DHM_STATURE_CM", "WINTER_FRACTIONS"]
