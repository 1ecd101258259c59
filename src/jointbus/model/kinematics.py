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
and Jacobians is another fixed handful of calls. ``bench/bench_kinematics.py`` measures it.
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
    root frame) and Jacobians ``(k, 3, nv)``.
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

    def evaluate(self, q: Configuration) -> tuple[FloatArray, FloatArray]:
        """``(positions (k, 3), jacobians (k, 3, nv))`` at configuration ``q``."""
        kin = self._kin
        qa = kin.q_array(q)
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
