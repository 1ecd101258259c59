"""Where a swinging foot lands (Raibert's heuristic) and the path it takes there.

Where it sits: :mod:`jointbus.robots.hb50.legged`, pure functions under the walking controller
(:mod:`.walking`); no state, no robot — plain 3-vectors in metres and seconds.

Foothold (Raibert, as in Cheetah's ``ConvexMPCLocomotion`` and motion_imitation's swing
controller), horizontal frame (yaw-aligned, z up, origin at the body), landing ``t_ahead`` s from
now::

    p = p_nom + v_des·t_ahead + v·T_st/2 + k·(v − v_des) + (ω_des × p_nom)·T_st/2

The nominal foot under its hip would drift back by ``v · T_stance`` during the coming stance;
placing it ``v · T_stance / 2`` ahead centres the stance on the hip. The feedback term steps
*into* a velocity error (a robot moving faster than asked lands further ahead and brakes). The
offset from the nominal foot (all but the ``v_des·t_ahead`` term) is limited to ``max_reach`` (m)
so the leg stays inside its workspace.

Swing path: horizontally a minimum-jerk blend ``10s³ − 15s⁴ + 6s⁵`` from lift-off to foothold
(zero velocity relative to the ground at both ends, so the foot neither scuffs nor slaps);
vertically up ``step_height`` over the first half and down over the second, each a minimum-jerk
segment.
"""

from __future__ import annotations

import math

__all__ = ["Vec", "raibert_foothold", "swing_point"]

Vec = tuple[float, float, float]


def raibert_foothold(
    nominal: Vec,
    velocity: Vec,
    velocity_desired: Vec,
    yaw_rate_desired: float,
    *,
    stance_time: float,
    t_ahead: float,
    gain: float,
    max_reach: float,
) -> tuple[float, float]:
    """The (x, y) foothold (m, horizontal frame, relative to the body now) — see the module doc.

    ``nominal``: the foot's neutral position under its hip (m); ``velocity``, ``velocity_desired``:
    measured and wanted body velocity (m/s); ``yaw_rate_desired`` rad/s; ``stance_time`` s;
    ``t_ahead``: time until touchdown (s); ``gain`` s (velocity feedback); ``max_reach`` m.
    """
    nx, ny, _ = nominal
    vx, vy, _ = velocity
    dx, dy, _ = velocity_desired
    half = 0.5 * stance_time
    # the body moves on by v_des · t_ahead before touchdown; the hip's own yaw velocity too
    tx = -yaw_rate_desired * ny
    ty = yaw_rate_desired * nx
    ox = vx * half + gain * (vx - dx) + tx * half
    oy = vy * half + gain * (vy - dy) + ty * half
    reach = math.hypot(ox, oy)
    if reach > max_reach:
        scale = max_reach / reach
        ox *= scale
        oy *= scale
    # the body moves on by v_des · t_ahead before the foot lands
    return nx + ox + dx * t_ahead, ny + oy + dy * t_ahead


def _min_jerk(s: float) -> tuple[float, float]:
    """Blend 0 … 1 and its derivative w.r.t. ``s`` on [0, 1]."""
    if s <= 0.0:
        return 0.0, 0.0
    if s >= 1.0:
        return 1.0, 0.0
    s2 = s * s
    return s2 * s * (10.0 - 15.0 * s + 6.0 * s2), 30.0 * s2 * (1.0 - 2.0 * s + s2)


def swing_point(
    start: Vec, end: Vec, step_height: float, s: float, duration: float
) -> tuple[Vec, Vec]:
    """Position (m) and velocity (m/s) at progress ``s`` ∈ [0, 1] of a swing of ``duration`` s
    from ``start`` to ``end`` (any frame fixed to the ground), rising ``step_height`` (m) above the
    higher of the two ends at mid-swing."""
    b, db = _min_jerk(s)
    rate = 1.0 / duration
    x = start[0] + (end[0] - start[0]) * b
    y = start[1] + (end[1] - start[1]) * b
    vx = (end[0] - start[0]) * db * rate
    vy = (end[1] - start[1]) * db * rate
    top = max(start[2], end[2]) + step_height
    if s < 0.5:
        h, dh = _min_jerk(2.0 * s)
        z = start[2] + (top - start[2]) * h
        vz = (top - start[2]) * dh * 2.0 * rate
    else:
        h, dh = _min_jerk(2.0 * s - 1.0)
        z = top + (end[2] - top) * h
        vz = (end[2] - top) * dh * 2.0 * rate
    return (x, y, z), (vx, vy, vz)
