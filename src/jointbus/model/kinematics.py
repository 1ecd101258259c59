"""Forward kinematics and point Jacobians of a :class:`~jointbus.model.robot.RobotModel`.

Where it sits: :mod:`jointbus.model`; used by the control node (foot positions and Jacobians at
500 Hz), by :mod:`~jointbus.model.leg_ik` tests and by the live view. Poses are relative to the
robot's root link (the base: ``body`` of a floating-base quadruped, ``world`` of the rover).

Configuration ``q``: either a mapping ``{joint name: value}`` with a value shaped to the joint's
kind (a float for single-DoF joints, :class:`~jointbus.math.Transform2D` for planar,
:class:`~jointbus.math.Transform` for floating — the shapes of ``JointState``), or a flat array
in :attr:`Kinematics.joint_names` order (the model's :meth:`~RobotModel.moving_joints`: actuated
joints in actuator order first) with 1 number per single-DoF joint (rad or m), 3 per planar joint
(x, y in m, theta in rad) and 7 per floating joint (x, y, z in m, then the quaternion w, x, y, z).

Jacobian columns follow velocity coordinates: 1 per single-DoF joint, 3 per planar joint (the
rates of x, y, theta) and 6 per floating joint (linear then angular velocity, both expressed in
the joint frame — the frame the joint's ``origin`` places in the parent — with the rotation about
the child frame's origin). The Jacobian is 3 × :attr:`Kinematics.nv`, expressed in the root frame.

Speed: the whole tree is computed with a handful of batched numpy calls — all revolute rotations
at once (Rodrigues), one batched product for the joint transforms, then one batched product per
tree depth — instead of a Python loop of small matrix products, and :class:`PointSet` precomputes
the index arrays for a fixed set of points (the four feet) so that evaluating their positions
and Jacobians is another fixed handful of calls. When every moving joint above the points is
revolute (the hb50's legs, the arm), :class:`PointSet` goes further (:class:`_RevoluteChains`):
all the chains are stepped together, one batched product per chain depth, from coefficient
arrays prepared once, into buffers allocated once — at this size every numpy call costs about a
microsecond whatever its size, so the number of calls is the cost. ``bench/bench_kinematics.py``
measures it against a naive per-joint loop of the same run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from jointbus.math import Quaternion, Transform, Transform2D, Vec3
from jointbus.messages.errors import UnknownJointError
from jointbus.model.errors import ConfigurationError
from jointbus.model.joint import JointType
from jointbus.model.robot import RobotModel

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
JointValue = float | Transform2D | Transform
"""A joint's configuration, shaped to its kind (rad or m; planar pose; 3-D pose)."""
Configuration = Mapping[str, JointValue] | npt.ArrayLike

_NQ = {JointType.PLANAR: 3, JointType.FLOATING: 7}
_NV = {JointType.PLANAR: 3, JointType.FLOATING: 6}
_REVOLUTE = (JointType.REVOLUTE, JointType.CONTINUOUS)
_CROSS_A = np.array([1, 2, 0], dtype=np.intp)
_CROSS_B = np.array([2, 0, 1], dtype=np.intp)


def _skew(a: FloatArray) -> FloatArray:
    x, y, z = a
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def _plane_basis(normal: Vec3) -> FloatArray:
    """Columns (u, v, n): a right-handed frame whose third axis is the plane normal ``n``."""
    n = normal.to_numpy()
    # a floor plane (n along z, the usual case) keeps u = x and v = y exactly
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = helper - n * float(helper @ n)
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    return np.column_stack((u, v, n))


@dataclass(frozen=True, slots=True)
class _MultiDof:
    """A planar or floating joint: handled in Python (few per robot)."""

    tree_index: int
    type: JointType
    q_offset: int
    v_offset: int
    basis: FloatArray  # planar: columns (u, v, n); floating: identity


class Kinematics:
    """Forward kinematics and Jacobians of one robot model (build once, call at rate)."""

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        tree = model.tree_order
        moving = model.moving_joints()
        self.joint_names: tuple[str, ...] = tuple(j.name for j in moving)
        """Order of joints in array configurations and Jacobian columns."""

        # q and v layout
        q_offset: dict[str, int] = {}
        v_offset: dict[str, int] = {}
        nq = nv = 0
        for joint in moving:
            q_offset[joint.name] = nq
            v_offset[joint.name] = nv
            nq += _NQ.get(joint.type, 1)
            nv += _NV.get(joint.type, 1)
        self.nq = nq
        """Length of an array configuration."""
        self.nv = nv
        """Number of Jacobian columns (velocity coordinates)."""
        self._q_offset = q_offset
        self._v_offset = v_offset

        # links: root is index 0, the child of tree joint i is index i + 1
        self.link_names: tuple[str, ...] = (model.root, *(j.child for j in tree))
        self._link_index = {name: i for i, name in enumerate(self.link_names)}
        n = len(tree)
        self._n_joints = n
        self._origins = np.stack([j.origin.to_matrix() for j in tree]) if n else np.zeros((0, 4, 4))
        self._eye_stack = np.tile(np.eye(4), (n, 1, 1))
        self._joint_parent_link = np.array(
            [self._link_index[j.parent] for j in tree], dtype=np.intp
        )
        self._joint_type = tuple(j.type for j in tree)
        self._joint_axis = np.array([tuple(j.axis) for j in tree]).reshape(n, 3)

        def tree_indices(types: tuple[JointType, ...]) -> IntArray:
            return np.array([i for i, j in enumerate(tree) if j.type in types], dtype=np.intp)

        self._rev = tree_indices(_REVOLUTE)
        self._rev_q = np.array([q_offset[tree[i].name] for i in self._rev], dtype=np.intp)
        a = self._joint_axis[self._rev]
        self._rev_k = np.stack([_skew(x) for x in a]) if len(a) else np.zeros((0, 3, 3))
        self._rev_aat = np.einsum("ni,nj->nij", a, a)
        self._rev_eye_minus_aat = np.eye(3) - self._rev_aat
        self._pri = tree_indices((JointType.PRISMATIC,))
        self._pri_q = np.array([q_offset[tree[i].name] for i in self._pri], dtype=np.intp)
        self._pri_axis = self._joint_axis[self._pri]
        self._multi = tuple(
            _MultiDof(
                i,
                j.type,
                q_offset[j.name],
                v_offset[j.name],
                _plane_basis(j.axis) if j.type is JointType.PLANAR else np.eye(3),
            )
            for i, j in enumerate(tree)
            if j.type in (JointType.PLANAR, JointType.FLOATING)
        )

        # levels: the joints at each tree depth are contiguous in breadth-first order
        depth = [0] * (n + 1)
        for i in range(n):
            depth[i + 1] = depth[int(self._joint_parent_link[i])] + 1
        self._levels: list[tuple[int, int, IntArray | None]] = []
        start = 0
        while start < n:
            end = start
            while end < n and depth[end + 1] == depth[start + 1]:
                end += 1
            parents = self._joint_parent_link[start:end].copy()
            self._levels.append((start, end, None if not parents.any() else parents))
            start = end
        self._tree = tree

    # --- configurations -----------------------------------------------------------------------
    def zero_q(self) -> FloatArray:
        """The zero configuration (identity quaternions for floating joints)."""
        q = np.zeros(self.nq)
        for m in self._multi:
            if m.type is JointType.FLOATING:
                q[m.q_offset + 3] = 1.0
        return q

    def q_from_pose(self, name: str) -> FloatArray:
        """The named pose of the model as an array (joints the pose omits stay at zero)."""
        q = self.zero_q()
        for joint_name, value in self.model.pose(name).items():
            q[self._q_offset[joint_name]] = value
        return q

    def q_array(self, q: Configuration) -> FloatArray:
        """``q`` as a validated float64 array of length :attr:`nq` (see the module docstring)."""
        if isinstance(q, Mapping):
            return self._q_from_mapping(q)
        try:
            arr = np.asarray(q, dtype=np.float64)
        except (TypeError, ValueError):
            raise ConfigurationError(q, f"an array of {self.nq} numbers or a mapping") from None
        if arr.shape != (self.nq,):
            raise ConfigurationError(
                f"array of shape {arr.shape}",
                f"shape ({self.nq},) in the order {self.joint_names}",
            )
        if not np.isfinite(arr).all():
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            name, index = self._joint_at_q_index(bad)
            raise ConfigurationError(float(arr[bad]), "a finite number", joint=name, index=index)
        return arr

    def _joint_at_q_index(self, k: int) -> tuple[str, int]:
        for index, name in enumerate(self.joint_names):
            if (
                self._q_offset[name]
                <= k
                < self._q_offset[name] + _NQ.get(self.model.joint(name).type, 1)
            ):
                return name, index
        raise AssertionError(k)  # pragma: no cover - k is always inside the layout

    def _q_from_mapping(self, q: Mapping[str, JointValue]) -> FloatArray:
        for name in q:
            if name not in self._q_offset:
                raise UnknownJointError(str(name), self.joint_names)
        out = np.empty(self.nq)
        for index, name in enumerate(self.joint_names):
            if name not in q:
                raise ConfigurationError(
                    "missing", "a value for every moving joint", joint=name, index=index
                )
            value = q[name]
            k = self._q_offset[name]
            jtype = self.model.joint(name).type
            if jtype is JointType.PLANAR:
                if not isinstance(value, Transform2D):
                    raise ConfigurationError(
                        value, "a Transform2D (planar joint)", joint=name, index=index
                    )
                out[k : k + 3] = (value.x, value.y, value.theta)
            elif jtype is JointType.FLOATING:
                if not isinstance(value, Transform):
                    raise ConfigurationError(
                        value, "a Transform (floating joint)", joint=name, index=index
                    )
                t, r = value.translation, value.rotation
                out[k : k + 7] = (t.x, t.y, t.z, r.w, r.x, r.y, r.z)
            else:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ConfigurationError(
                        value, "a number (single-DoF joint, rad or m)", joint=name, index=index
                    )
                if not math.isfinite(value):
                    raise ConfigurationError(value, "a finite number", joint=name, index=index)
                out[k] = value
        return out

    # --- forward kinematics -------------------------------------------------------------------
    def frames(self, q: Configuration) -> FloatArray:
        """Poses of all links in the root frame: ``(len(link_names), 4, 4)`` homogeneous."""
        return self._frames(self.q_array(q))

    def _frames(self, q: FloatArray) -> FloatArray:
        motion = self._eye_stack.copy()
        if len(self._rev):
            angles = q[self._rev_q][:, None, None]
            c = np.cos(angles)
            s = np.sin(angles)
            motion[self._rev, :3, :3] = (
                self._rev_aat + c * self._rev_eye_minus_aat + s * self._rev_k
            )
        if len(self._pri):
            motion[self._pri, :3, 3] = self._pri_axis * q[self._pri_q][:, None]
        for m in self._multi:
            motion[m.tree_index] = self._multi_motion(m, q)
        local = self._origins @ motion
        frames = np.empty((self._n_joints + 1, 4, 4))
        frames[0] = np.eye(4)
        for start, end, parents in self._levels:
            if parents is None:  # every parent is the root, whose pose is the identity
                frames[start + 1 : end + 1] = local[start:end]
            else:
                frames[start + 1 : end + 1] = frames[parents] @ local[start:end]
        return frames

    @staticmethod
    def _multi_motion(m: _MultiDof, q: FloatArray) -> FloatArray:
        out = np.eye(4)
        k = m.q_offset
        if m.type is JointType.PLANAR:
            x, y, theta = q[k : k + 3]
            c, s = math.cos(theta), math.sin(theta)
            rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            b = m.basis
            out[:3, :3] = b @ rz @ b.T
            out[:3, 3] = b[:, 0] * x + b[:, 1] * y
        else:
            out[:3, 3] = q[k : k + 3]
            w, x, y, z = q[k + 3 : k + 7]
            norm = math.sqrt(w * w + x * x + y * y + z * z)
            if norm < 1e-9:
                raise ConfigurationError((w, x, y, z), "a non-zero quaternion (floating joint)")
            out[:3, :3] = Quaternion(w / norm, x / norm, y / norm, z / norm).to_matrix()
        return out

    def link_index(self, link: str) -> int:
        """Index of ``link`` in :attr:`link_names` (and in :meth:`frames`)."""
        try:
            return self._link_index[link]
        except KeyError:
            self.model.link(link)  # raises UnknownLinkError naming the link
            raise  # pragma: no cover

    def fk(self, q: Configuration, link: str) -> Transform:
        """Pose of ``link`` in the root frame (translation in m)."""
        index = self.link_index(link)
        return Transform.from_matrix(self.frames(q)[index])

    def fk_all(self, q: Configuration) -> dict[str, Transform]:
        """Poses of every link in the root frame."""
        frames = self.frames(q)
        return {name: Transform.from_matrix(frames[i]) for i, name in enumerate(self.link_names)}

    def jacobian(self, q: Configuration, link: str, point_in_link: Vec3 = Vec3.ZERO) -> FloatArray:
        """Linear Jacobian (3 × :attr:`nv`, root frame) of ``point_in_link`` (m) on ``link``."""
        _, jacobians = self.point_set([(link, point_in_link)]).evaluate(q)
        out: FloatArray = jacobians[0]
        return out

    def point_set(self, targets: Sequence[tuple[str, Vec3]]) -> PointSet:
        """A prepared set of points ``(link, point in link frame)`` to evaluate at rate."""
        return PointSet(self, targets)


class PointSet:
    """Positions and linear Jacobians of fixed points on links (e.g. the four feet).

    Built once by :meth:`Kinematics.point_set`; :meth:`evaluate` returns positions ``(k, 3)`` (m,
    root frame) and Jacobians ``(k, 3, nv)``, new arrays on every call. Points whose chains hold
    only revolute joints are evaluated by :class:`_RevoluteChains`, which works in buffers of its
    own: one :class:`PointSet` must not be evaluated from two threads at once.
    """

    def __init__(self, kinematics: Kinematics, targets: Sequence[tuple[str, Vec3]]) -> None:
        kin = kinematics
        self._kin = kin
        self.links = tuple(link for link, _ in targets)
        self._target_link = np.array([kin.link_index(link) for link in self.links], dtype=np.intp)
        self._points = np.array([tuple(p) for _, p in targets], dtype=np.float64).reshape(-1, 3)
        pairs_rev: list[tuple[int, int, int]] = []  # (target, tree joint, column)
        pairs_pri: list[tuple[int, int, int]] = []
        self._pairs_multi: list[tuple[int, _MultiDof]] = []
        multi_by_tree = {m.tree_index: m for m in kin._multi}
        for t, link in enumerate(self.links):
            for joint in kin.model.chain(link):
                if not joint.is_moving:
                    continue
                tree_index = kin._tree.index(joint)
                column = kin._v_offset[joint.name]
                if joint.type in _REVOLUTE:
                    pairs_rev.append((t, tree_index, column))
                elif joint.type is JointType.PRISMATIC:
                    pairs_pri.append((t, tree_index, column))
                else:
                    self._pairs_multi.append((t, multi_by_tree[tree_index]))

        def split(pairs: list[tuple[int, int, int]]) -> tuple[IntArray, IntArray, IntArray]:
            arr = np.array(pairs, dtype=np.intp).reshape(-1, 3)
            return arr[:, 0].copy(), arr[:, 1].copy() + 1, arr[:, 2].copy()

        # joint tree index + 1 = index of the joint's child link, whose frame holds the axis
        self._rev_target, self._rev_link, self._rev_col = split(pairs_rev)
        self._rev_axis = kin._joint_axis[self._rev_link - 1][:, :, None]
        self._pri_target, self._pri_link, self._pri_col = split(pairs_pri)
        self._pri_axis = kin._joint_axis[self._pri_link - 1][:, :, None]
        self._k = len(self.links)
        self._revolute = (
            _RevoluteChains(kin, targets)
            if self._k and len(self._rev_link) and not len(self._pri_link) and not self._pairs_multi
            else None
        )

    def evaluate(self, q: Configuration) -> tuple[FloatArray, FloatArray]:
        """``(positions (k, 3), jacobians (k, 3, nv))`` at configuration ``q``."""
        kin = self._kin
        qa = kin.q_array(q)
        if self._revolute is not None:
            return self._revolute.evaluate(qa)
        frames = kin._frames(qa)
        target = frames[self._target_link]
        positions = (target[:, :3, :3] @ self._points[:, :, None])[:, :, 0] + target[:, :3, 3]
        jac = np.zeros((self._k, 3, kin.nv))
        if len(self._rev_link):
            f = frames[self._rev_link]
            axis = (f[:, :3, :3] @ self._rev_axis)[:, :, 0]
            d = positions[self._rev_target] - f[:, :3, 3]
            # axis × d, written out: np.cross costs three times as much for a dozen rows
            jac[self._rev_target, :, self._rev_col] = (
                axis[:, _CROSS_A] * d[:, _CROSS_B] - axis[:, _CROSS_B] * d[:, _CROSS_A]
            )
        if len(self._pri_link):
            f = frames[self._pri_link]
            jac[self._pri_target, :, self._pri_col] = (f[:, :3, :3] @ self._pri_axis)[:, :, 0]
        for t, m in self._pairs_multi:
            child = frames[m.tree_index + 1]
            self._multi_columns(jac[t], m, child, positions[t], qa)
        return positions, jac

    @staticmethod
    def _multi_columns(
        out: FloatArray, m: _MultiDof, child: FloatArray, point: FloatArray, q: FloatArray
    ) -> None:
        r_child = child[:3, :3]
        d = point - child[:3, 3]
        k, c = m.q_offset, m.v_offset
        if m.type is JointType.PLANAR:
            local = Kinematics._multi_motion(m, q)[:3, :3]
            r_joint = r_child @ local.T  # the joint frame, before the planar motion
            out[:, c] = r_joint @ m.basis[:, 0]
            out[:, c + 1] = r_joint @ m.basis[:, 1]
            out[:, c + 2] = np.cross(r_joint @ m.basis[:, 2], d)
        else:
            local = Kinematics._multi_motion(m, q)[:3, :3]
            r_joint = r_child @ local.T
            out[:, c : c + 3] = r_joint
            for i in range(3):
                out[:, c + 3 + i] = np.cross(r_joint[:, i], d)
        del k


def _affine_view(base: FloatArray, grid: IntArray) -> FloatArray | None:
    """A view of the 1-D ``base`` equal to ``base[grid]`` for a 2-D index ``grid``, if there is one.

    There is when ``grid[i, j] == grid[0, 0] + i * a + j * b`` for some steps ``a`` and ``b`` (the
    hb50's joints: leg after leg, hip to knee, so ``a = 1`` and ``b = 3``); reading or writing
    through it then costs no gather call. ``None`` otherwise.
    """
    rows, cols = grid.shape
    start = int(grid[0, 0])
    a = int(grid[1, 0]) - start if rows > 1 else 0
    b = int(grid[0, 1]) - start if cols > 1 else 0
    if not np.array_equal(grid, start + np.arange(rows)[:, None] * a + np.arange(cols) * b):
        return None
    item = base.itemsize
    view: FloatArray = np.lib.stride_tricks.as_strided(
        base[start:], shape=(rows, cols), strides=(a * item, b * item), writeable=True
    )
    return view


class _RevoluteChains:
    """Positions and Jacobians of points at the ends of revolute-only chains, all chains at once.

    Each point's chain is folded into steps, one per revolute joint: step ``l`` is the constant
    transform from the previous joint's frame to joint ``l``'s frame (fixed joints folded in)
    times the joint's rotation, which is linear in ``(1, cos θ, sin θ)`` (Rodrigues:
    ``a aᵀ + cos θ (I − a aᵀ) + sin θ [a]×``). So is everything the evaluation needs from a step
    once the constants are multiplied in: the 4 × 8 block ``[T | T [a]× | T p]`` (``T`` the
    step's 4 × 4 transform, ``[a]×`` the axis's cross-product matrix, ``p`` the point in the
    last link's frame). One batched product of the ``(1, cos, sin)`` rows with the prepared
    coefficients gives every block of every chain; one batched product per depth chains them;
    then the Jacobian column of joint ``l`` is ``R_l [a]× R_lᵀ (p − o_l)`` — the joint axis in
    the root frame crossed with the lever arm ``p − o_l`` (m). A chain with fewer joints is
    padded at its end with identity steps whose columns are dropped. All arrays are allocated
    here, once; a call allocates only the two arrays it returns.
    """

    _WIDTH = 8  # columns of a step's block: transform (4), transform · [a]× (3), point (1)

    def __init__(self, kin: Kinematics, targets: Sequence[tuple[str, Vec3]]) -> None:
        chains: list[tuple[list[tuple[FloatArray, int]], FloatArray]] = []
        for link, point in targets:
            steps: list[tuple[FloatArray, int]] = []  # (transform to the joint frame, tree index)
            pre = np.eye(4)
            for joint in kin.model.chain(link):
                pre = pre @ joint.origin.to_matrix()
                if joint.is_moving:
                    steps.append((pre, kin._tree.index(joint)))
                    pre = np.eye(4)
            chains.append((steps, pre @ np.array([*tuple(point), 1.0])))
        k = len(chains)
        depth = max(len(steps) for steps, _ in chains)
        width = self._WIDTH
        coefficients = np.zeros((depth, k, 3, 4 * width))
        q_index = np.full((depth, k), kin.nq, dtype=np.intp)  # nq: the padding's zero angle
        column = np.full((depth, k), -1, dtype=np.intp)
        for t, (steps, point_h) in enumerate(chains):
            for level in range(depth):
                terms = np.zeros((3, 4, 4))  # the step's motion = terms · (1, cos, sin)
                skew = np.zeros((4, 3))
                if level < len(steps):
                    pre, tree_index = steps[level]
                    joint = kin._tree[tree_index]
                    axis = kin._joint_axis[tree_index]
                    aat = np.outer(axis, axis)
                    terms[0, :3, :3] = aat
                    terms[0, 3, 3] = 1.0
                    terms[1, :3, :3] = np.eye(3) - aat
                    terms[2, :3, :3] = _skew(axis)
                    skew[:3] = _skew(axis)
                    q_index[level, t] = kin._q_offset[joint.name]
                    column[level, t] = kin._v_offset[joint.name]
                else:
                    pre = np.eye(4)
                    terms[0] = np.eye(4)
                for i in range(3):
                    step = pre @ terms[i]
                    block = np.concatenate((step, step @ skew, (step @ point_h)[:, None]), axis=1)
                    coefficients[level, t, i] = block.reshape(-1)
        self._depth = depth
        self._coefficients = coefficients
        self._trig = np.zeros((depth, k, 1, 3))  # rows (1, cos θ, sin θ)
        self._trig[..., 0, 0] = 1.0
        self._q = np.zeros(kin.nq + 1)  # the configuration, then the padding's zero angle
        self._angles_view = _affine_view(self._q, q_index)
        self._q_index = q_index
        self._angles = np.zeros((depth, k))
        self._local = np.zeros((depth, k, 4, width))
        self._frames = np.zeros((depth, k, 4, width))
        self._lever = np.zeros((depth, k, 3, 1))
        self._lever_local = np.zeros((depth, k, 3, 1))
        self._columns = np.zeros((depth, k, 3, 1))
        self._jac = np.zeros((k, 3, kin.nv))
        real = (column >= 0).ravel()
        self._rows = None if real.all() else np.flatnonzero(real)
        self._jac_target = np.broadcast_to(np.arange(k), (depth, k)).ravel()[real].copy()
        self._jac_column = column.ravel()[real].copy()
        # every real column at once through a strided view of the Jacobian buffer, when the
        # columns are laid out regularly (jac[t, i, c] is element t·3·nv + i·nv + c)
        self._jac_view: FloatArray | None = None
        if self._rows is None:
            flat = (column + np.arange(k) * 3 * kin.nv).astype(np.intp)
            view = _affine_view(self._jac.reshape(-1), flat)
            if view is not None:
                item = self._jac.itemsize
                self._jac_view = np.lib.stride_tricks.as_strided(
                    view,
                    shape=(depth, k, 3, 1),
                    strides=(*view.strides, kin.nv * item, item),
                    writeable=True,
                )

    def evaluate(self, q: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``(positions (k, 3), jacobians (k, 3, nv))`` at the validated array ``q``."""
        self._q[:-1] = q
        angles = self._angles_view
        if angles is None:
            angles = np.take(self._q, self._q_index, out=self._angles)
        trig = self._trig
        np.cos(angles, out=trig[..., 0, 1])
        np.sin(angles, out=trig[..., 0, 2])
        local = self._local
        depth, k = self._depth, local.shape[1]
        np.matmul(trig, self._coefficients, out=local.reshape(depth, k, 1, -1))
        frames = self._frames
        frames[0] = local[0]
        for level in range(1, depth):
            np.matmul(frames[level - 1, :, :, :4], local[level], out=frames[level])
        point = frames[depth - 1, :, :3, 7:8]
        np.subtract(point, frames[..., :3, 3:4], out=self._lever)
        np.matmul(frames[..., :3, :3].swapaxes(-1, -2), self._lever, out=self._lever_local)
        if self._jac_view is not None:
            np.matmul(frames[..., :3, 4:7], self._lever_local, out=self._jac_view)
        else:
            columns = np.matmul(frames[..., :3, 4:7], self._lever_local, out=self._columns)
            flat = columns.reshape(-1, 3)
            self._jac[self._jac_target, :, self._jac_column] = (
                flat if self._rows is None else flat[self._rows]
            )
        return point[:, :, 0].copy(), self._jac.copy()
