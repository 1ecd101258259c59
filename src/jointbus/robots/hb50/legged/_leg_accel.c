/*
 * _leg_accel: the per-leg arithmetic of the hb50 control step -- foot kinematics and statics, the
 * leg IK, the joint rates and torques of the walking controller, the stance-force solve
 * (optional compiled core of jointbus.robots.hb50.legged.leg_kinematics and .stance_forces).
 *
 * Where it sits: jointbus.robots.hb50.legged. leg_kinematics.py and stance_forces.py load this
 * module when it was built (setup.py marks it optional; JOINTBUS_NO_ACCEL=1 turns it off) and
 * otherwise run their pure-Python reference methods, which compute the same numbers
 * (*_python; tests/robots/hb50/legged/test_leg_accel.py holds the two together on random leg
 * states).
 *
 * Why it exists: the control node runs these every frame (500 or 1000 Hz) on four legs: some
 * 400 float operations, sines, cosines and square roots on plain Python floats, ~30 us of a
 * control step that issue 21 wants at <= 0.5x the bare loop's cycle. Here they are one call each.
 * The formulas, their order of operations and their results are those of the Python methods
 * (built with -ffp-contract=off, so no fused multiply-add changes a rounding); the one
 * difference is math.hypot, which Python computes with its own correctly rounded algorithm:
 * results may differ in the last bit where a hypotenuse enters.
 *
 * Legs(rows, n_joints)
 *   rows: one tuple per leg, (i0, i1, i2, hx, hy, hz, s0, s1, s2, ox, oz, w, l1, a1, l2, a2,
 *   below, knee, lo0, hi0, lo1, hi1, lo2, hi2) -- joint indices in actuator order, then the
 *   constants of leg_kinematics' closed form and of model.leg_ik.LegIK (its branch signs and
 *   joint position limits). n_joints: length of an actuator-order joint vector.
 *
 * Legs.evaluate(q, qd, tau, singular_det) -> (positions, velocities, forces, dets)
 *   LegKinematics.evaluate_rows: per leg (x, y, z) tuples (m, m/s, N; body frame) and det J.
 *   qd / tau may be None (velocities zero, forces NaN).
 * Legs.rates_and_torques(q, foot_velocities, foot_forces) -> (rates or None, torques)
 *   LegKinematics.rates_and_torques: J^-1 v and -J^T f, actuator order.
 * Legs.solve_ik(targets) -> list of (j0, j1, j2) or None per leg
 *   LegIK.solve for each leg's foot target (m, body frame); None where the target is not finite,
 *   out of reach, or its angles are not inside the limits as they come: the caller then runs
 *   LegIK.solve for that leg (which tries the angles +-2 pi, or raises its UnreachableError).
 * Legs.joint_targets(q, rotation, targets, velocities, forces, stance, gains, limits)
 *   -> (kp, kd, position, velocity, torque, unsolved)
 *   LegKinematics.joint_targets: the walking controller's joint-level step in one call -- the
 *   feet's targets, velocities and forces turned from the horizontal frame into the body frame
 *   (R_rp^T with R_rp's rows in `rotation`), rates and torques, IK, stance / swing gains, the
 *   per-joint (torque, velocity) limits. unsolved: (leg, body-frame target) of each leg whose IK
 *   is left to LegIK.solve (its joints hold the measured positions until then).
 * Legs.estimate(q, qd, tau, singular_det, rotation, wx, wy, wz, ax, ay, az, contact_on,
 *               contact_off, foot_radius, filter, dt, velocity_tau, out, contact) -> None
 *   StateEstimator.update_python after the orientation (its reference, which runs where this
 *   module is not built): the feet by evaluate, the contacts with their hysteresis, the height
 *   (math.fsum, called, over the stance feet; the lowest foot without one), the leg odometry's
 *   low-pass and the odometry position, in the reference's order of operations. q, qd, tau:
 *   lists or tuples of exactly n_joints floats in actuator order; rotation: the body's rows
 *   (three 3-tuples); (wx, wy, wz) rad/s and (ax, ay, az) m/s^2 in the body frame, as the
 *   reference takes them; foot_radius: n_legs floats; filter: the estimator's array('d') of
 *   6 + n_legs doubles (height, body velocity, x, y, one 1.0 / 0.0 contact flag per leg),
 *   updated in place; out: a writable float64 buffer of 3 n_joints + 9 n_legs + 18 doubles
 *   that receives the estimate's arrays (joints, feet, then position, body and world
 *   velocities, angular ones, acceleration); contact: a writable bool buffer of n_legs.
 *   Why: the estimator ran every frame as ~70 lines of Python on boxed floats and 13 numpy
 *   arrays built from tuples, 60-68 us of the control step's CPU a frame in the running
 *   layout (docs/PERFORMANCE.md); here it is one call, and the arrays are views of `out`.
 *   Errors as the reference's, raised before the filter changes (the kinematics: IndexError,
 *   ValueError, ZeroDivisionError), or with the contacts already updated (math.fsum's).
 * stance_dual(feet, stance, wrench, regularisation, fz_min, fz_max, mu) -> list of (fx, fy, fz)
 *   StanceForceSolver.solve_dual; regularisation: the six alpha / s_i of the dual system.
 * walk_plan(rotation, foot_position, body_linear_velocity, body_angular_velocity, position, height,
 *           stance, progress, stance_time, swing_time, stopped, setpoint, dt, nominal,
 *           foot_radius, gains, memory) -> (rows, feet, targets, velocities, wrench)
 *   WalkingController.plan (its reference: plan_python): the horizontal frame's rows, the feet
 *   relative to the centre of mass, every foot's target and velocity (stance: back at the
 *   set-point; swing: swing.raibert_foothold and swing.swing_point), the wrench for the stance
 *   forces. Arrays may be float64 buffers (numpy) or sequences; gains: the numbers of
 *   WalkingController._plan_gains in their order; memory: the controller's array('d') of stance
 *   targets, lift-offs, stance flags and heading target, updated in place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <string.h>

#define MAX_LEGS 8
#define N_ROW 24
static const double TAU = 6.283185307179586;
static const double REACH_TOL = 1e-9;
static const double LIMIT_TOL = 1e-9;

typedef struct {
    Py_ssize_t i[3];
    double hx, hy, hz, s0, s1, s2, ox, oz, w, l1, a1, l2, a2, below, knee;
    double lo[3], hi[3];
} Leg;

typedef struct {
    PyObject_HEAD
    Py_ssize_t n_legs;
    Py_ssize_t n_joints;
    Leg leg[MAX_LEGS];
} LegsObject;

/* ---- reading Python values ------------------------------------------------------------------ */

/* Item `index` of a list or tuple `seq` as a double (-1.0 with an exception set on failure). */
static double
item_double(PyObject *seq, Py_ssize_t index)
{
    PyObject *item = PySequence_Fast_GET_ITEM(seq, index);
    if (PyFloat_CheckExact(item)) {
        return PyFloat_AS_DOUBLE(item);
    }
    return PyFloat_AsDouble(item);
}

/* `obj` as a list or tuple of at least `n` items (a new reference), or NULL with an error:
 * `error` (the type the Python reference raises: IndexError for a joint vector it indexes,
 * ValueError for per-leg rows it zips) when it is shorter. */
static PyObject *
fast_sequence(PyObject *obj, Py_ssize_t n, const char *what, PyObject *error)
{
    PyObject *seq = PySequence_Fast(obj, what);
    if (seq == NULL) {
        return NULL;
    }
    if (PySequence_Fast_GET_SIZE(seq) < n) {
        PyErr_Format(error, "%s: %zd values; expected at least %zd", what,
                     PySequence_Fast_GET_SIZE(seq), n);
        Py_DECREF(seq);
        return NULL;
    }
    return seq;
}

/* Joint values q[i0], q[i1], q[i2] of one leg; 0 on success, -1 with an error. */
static int
leg_joints(PyObject *seq, const Leg *leg, double out[3])
{
    for (int k = 0; k < 3; k++) {
        out[k] = item_double(seq, leg->i[k]);
        if (out[k] == -1.0 && PyErr_Occurred()) {
            return -1;
        }
    }
    return 0;
}

/* Python's float division by zero. */
static int
division_by_zero(void)
{
    PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero");
    return -1;
}

/* Row `index` of `rows` (a list or tuple of 3-sequences) as three doubles. */
static int
row3(PyObject *rows, Py_ssize_t index, double out[3], const char *what)
{
    PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(rows, index), what);
    if (row == NULL) {
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(row) != 3) {
        PyErr_Format(PyExc_ValueError, "%s: row %zd has %zd values; expected 3", what, index,
                     PySequence_Fast_GET_SIZE(row));
        Py_DECREF(row);
        return -1;
    }
    for (int k = 0; k < 3; k++) {
        out[k] = item_double(row, k);
        if (out[k] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(row);
            return -1;
        }
    }
    Py_DECREF(row);
    return 0;
}

static PyObject *
triple(double x, double y, double z)
{
    return Py_BuildValue("(ddd)", x, y, z);
}

/* ---- Legs ----------------------------------------------------------------------------------- */

static int
Legs_init(LegsObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *rows_obj;
    Py_ssize_t n_joints;
    static char *kwlist[] = {"rows", "n_joints", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "On", kwlist, &rows_obj, &n_joints)) {
        return -1;
    }
    PyObject *rows = PySequence_Fast(rows_obj, "Legs: rows");
    if (rows == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(rows);
    if (n < 1 || n > MAX_LEGS) {
        PyErr_Format(PyExc_ValueError, "Legs: %zd legs; expected 1 to %d", n, MAX_LEGS);
        Py_DECREF(rows);
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(rows, k), "Legs: a row");
        if (row == NULL) {
            Py_DECREF(rows);
            return -1;
        }
        if (PySequence_Fast_GET_SIZE(row) != N_ROW) {
            PyErr_Format(PyExc_ValueError, "Legs: row %zd has %zd values; expected %d", k,
                         PySequence_Fast_GET_SIZE(row), N_ROW);
            Py_DECREF(row);
            Py_DECREF(rows);
            return -1;
        }
        double v[N_ROW];
        Leg *leg = &self->leg[k];
        for (int j = 0; j < N_ROW; j++) {
            PyObject *item = PySequence_Fast_GET_ITEM(row, j);
            if (j < 3) {
                Py_ssize_t index = PyNumber_AsSsize_t(item, PyExc_OverflowError);
                if (index == -1 && PyErr_Occurred()) {
                    Py_DECREF(row);
                    Py_DECREF(rows);
                    return -1;
                }
                if (index < 0 || index >= n_joints) {
                    PyErr_Format(PyExc_ValueError,
                                 "Legs: row %zd: joint index %zd outside 0..%zd", k, index,
                                 n_joints - 1);
                    Py_DECREF(row);
                    Py_DECREF(rows);
                    return -1;
                }
                leg->i[j] = index;
                continue;
            }
            v[j] = PyFloat_AsDouble(item);
            if (v[j] == -1.0 && PyErr_Occurred()) {
                Py_DECREF(row);
                Py_DECREF(rows);
                return -1;
            }
        }
        Py_DECREF(row);
        leg->hx = v[3];
        leg->hy = v[4];
        leg->hz = v[5];
        leg->s0 = v[6];
        leg->s1 = v[7];
        leg->s2 = v[8];
        leg->ox = v[9];
        leg->oz = v[10];
        leg->w = v[11];
        leg->l1 = v[12];
        leg->a1 = v[13];
        leg->l2 = v[14];
        leg->a2 = v[15];
        leg->below = v[16];
        leg->knee = v[17];
        for (int j = 0; j < 3; j++) {
            leg->lo[j] = v[18 + 2 * j];
            leg->hi[j] = v[19 + 2 * j];
        }
    }
    Py_DECREF(rows);
    self->n_legs = n;
    self->n_joints = n_joints;
    return 0;
}

/* The leg-plane quantities of one leg at joint angles q (leg_kinematics' symbols). */
typedef struct {
    double c0, sn0, lct, lst, l2cs, l2ss, z;
    double dx1, dz1, dx2, dz2, plane_det;
} Plane;

/* 0, or -1 with Python's error where math.cos / math.sin would refuse an angle (infinite). */
static int
leg_plane(const Leg *leg, const double q[3], Plane *p)
{
    double a = leg->s0 * q[0];
    double psi_t = leg->a1 - leg->s1 * q[1];
    double psi_s = psi_t + leg->a2 - leg->s2 * q[2];
    if (isinf(a) || isinf(psi_t) || isinf(psi_s)) {
        PyErr_SetString(PyExc_ValueError, "math domain error");
        return -1;
    }
    p->c0 = cos(a);
    p->sn0 = sin(a);
    p->l2cs = leg->l2 * cos(psi_s);
    p->l2ss = leg->l2 * sin(psi_s);
    p->lct = leg->l1 * cos(psi_t) + p->l2cs;
    p->lst = leg->l1 * sin(psi_t) + p->l2ss;
    p->z = leg->oz + p->lst;
    p->dx1 = leg->s1 * p->lst;
    p->dz1 = -leg->s1 * p->lct;
    p->dx2 = leg->s2 * p->l2ss;
    p->dz2 = -leg->s2 * p->l2cs;
    p->plane_det = p->dx1 * p->dz2 - p->dx2 * p->dz1;
    return 0;
}

/* One leg's torques -J^T f into torque[] and rates J^-1 v into rate[] (actuator order, body
 * frame); 0, or 1 when its Jacobian is exactly singular (its rates are then left alone). */
static int
leg_rates_torques(const Leg *leg, const Plane *p, const double v[3], const double f[3],
                  double *rate, double *torque)
{
    double s0 = leg->s0, w = leg->w;
    Py_ssize_t i0 = leg->i[0], i1 = leg->i[1], i2 = leg->i[2];
    double gy = p->c0 * f[1] + p->sn0 * f[2];
    double gz = -p->sn0 * f[1] + p->c0 * f[2];
    torque[i0] = s0 * (p->z * gy - w * gz);
    torque[i1] = -(p->dx1 * f[0] + p->dz1 * gz);
    torque[i2] = -(p->dx2 * f[0] + p->dz2 * gz);
    if (p->z == 0.0 || p->plane_det == 0.0) {
        return 1;
    }
    double hy = p->c0 * v[1] + p->sn0 * v[2];
    double hz = -p->sn0 * v[1] + p->c0 * v[2];
    double d0 = -s0 * hy / p->z;
    double h = hz - s0 * w * d0;
    rate[i0] = d0;
    rate[i1] = (v[0] * p->dz2 - p->dx2 * h) / p->plane_det;
    rate[i2] = (p->dx1 * h - p->dz1 * v[0]) / p->plane_det;
    return 0;
}

static PyObject *
Legs_evaluate(LegsObject *self, PyObject *args)
{
    PyObject *q_obj, *qd_obj, *tau_obj;
    double singular_det;
    if (!PyArg_ParseTuple(args, "OOOd", &q_obj, &qd_obj, &tau_obj, &singular_det)) {
        return NULL;
    }
    Py_ssize_t nj = self->n_joints, n = self->n_legs;
    PyObject *q = NULL, *qd = NULL, *tau = NULL;
    PyObject *pos = NULL, *vel = NULL, *force = NULL, *dets = NULL;
    q = fast_sequence(q_obj, nj, "positions", PyExc_IndexError);
    if (q == NULL) {
        goto fail;
    }
    if (qd_obj != Py_None &&
        (qd = fast_sequence(qd_obj, nj, "velocities", PyExc_IndexError)) == NULL) {
        goto fail;
    }
    if (tau_obj != Py_None &&
        (tau = fast_sequence(tau_obj, nj, "torques", PyExc_IndexError)) == NULL) {
        goto fail;
    }
    pos = PyList_New(n);
    vel = PyList_New(n);
    force = PyList_New(n);
    dets = PyList_New(n);
    if (pos == NULL || vel == NULL || force == NULL || dets == NULL) {
        goto fail;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        const Leg *leg = &self->leg[k];
        double jq[3];
        Plane p;
        if (leg_joints(q, leg, jq) < 0 || leg_plane(leg, jq, &p) < 0) {
            goto fail;
        }
        double x = leg->ox + p.lct, w = leg->w, s0 = leg->s0;
        PyObject *item = triple(leg->hx + x, leg->hy + p.c0 * w - p.sn0 * p.z,
                                leg->hz + p.sn0 * w + p.c0 * p.z);
        if (item == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(pos, k, item);
        double det = s0 * p.z * p.plane_det;
        if ((item = PyFloat_FromDouble(det)) == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(dets, k, item);
        if (qd != NULL) {
            double d[3];
            if (leg_joints(qd, leg, d) < 0) {
                goto fail;
            }
            double vy = -s0 * p.z * d[0];
            double vz = s0 * w * d[0] + p.dz1 * d[1] + p.dz2 * d[2];
            item = triple(p.dx1 * d[1] + p.dx2 * d[2], p.c0 * vy - p.sn0 * vz,
                          p.sn0 * vy + p.c0 * vz);
        }
        else {
            item = triple(0.0, 0.0, 0.0);
        }
        if (item == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(vel, k, item);
        if (tau != NULL && fabs(det) >= singular_det) {
            double t[3];
            if (leg_joints(tau, leg, t) < 0) {
                goto fail;
            }
            if (p.plane_det == 0.0 || p.z == 0.0) { /* only with singular_det = 0 */
                division_by_zero();
                goto fail;
            }
            double gx = (t[2] * p.dz1 - t[1] * p.dz2) / p.plane_det;
            double gz = (t[1] * p.dx2 - t[2] * p.dx1) / p.plane_det;
            double gy = (s0 * t[0] + w * gz) / p.z;
            item = triple(gx, p.c0 * gy - p.sn0 * gz, p.sn0 * gy + p.c0 * gz);
        }
        else {
            item = triple(Py_NAN, Py_NAN, Py_NAN);
        }
        if (item == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(force, k, item);
    }
    Py_DECREF(q);
    Py_XDECREF(qd);
    Py_XDECREF(tau);
    return Py_BuildValue("(NNNN)", pos, vel, force, dets);
fail:
    Py_XDECREF(q);
    Py_XDECREF(qd);
    Py_XDECREF(tau);
    Py_XDECREF(pos);
    Py_XDECREF(vel);
    Py_XDECREF(force);
    Py_XDECREF(dets);
    return NULL;
}

static PyObject *
Legs_rates_and_torques(LegsObject *self, PyObject *args)
{
    PyObject *q_obj, *v_obj, *f_obj;
    if (!PyArg_ParseTuple(args, "OOO", &q_obj, &v_obj, &f_obj)) {
        return NULL;
    }
    Py_ssize_t nj = self->n_joints, n = self->n_legs;
    PyObject *q = NULL, *vs = NULL, *fs = NULL, *rates = NULL, *torques = NULL;
    double r[64] = {0.0}, t[64] = {0.0};
    double *rate = r, *torque = t;
    if (nj > 64) {
        rate = PyMem_Calloc((size_t)nj, sizeof(double));
        torque = PyMem_Calloc((size_t)nj, sizeof(double));
        if (rate == NULL || torque == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
    }
    if ((q = fast_sequence(q_obj, nj, "positions", PyExc_IndexError)) == NULL ||
        (vs = fast_sequence(v_obj, n, "foot_velocities", PyExc_ValueError)) == NULL ||
        (fs = fast_sequence(f_obj, n, "foot_forces", PyExc_ValueError)) == NULL) {
        goto fail;
    }
    if (PySequence_Fast_GET_SIZE(vs) != n || PySequence_Fast_GET_SIZE(fs) != n) {
        PyErr_Format(PyExc_ValueError, "one foot velocity and force per leg (%zd)", n);
        goto fail;
    }
    int singular = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        const Leg *leg = &self->leg[k];
        double jq[3], v[3], f[3];
        Plane p;
        if (leg_joints(q, leg, jq) < 0 || row3(vs, k, v, "foot_velocities") < 0 ||
            row3(fs, k, f, "foot_forces") < 0 || leg_plane(leg, jq, &p) < 0) {
            goto fail;
        }
        singular |= leg_rates_torques(leg, &p, v, f, rate, torque);
    }
    torques = PyList_New(nj);
    if (torques == NULL) {
        goto fail;
    }
    for (Py_ssize_t j = 0; j < nj; j++) {
        PyObject *x = PyFloat_FromDouble(torque[j]);
        if (x == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(torques, j, x);
    }
    if (singular) {
        rates = Py_NewRef(Py_None);
    }
    else {
        if ((rates = PyList_New(nj)) == NULL) {
            goto fail;
        }
        for (Py_ssize_t j = 0; j < nj; j++) {
            PyObject *x = PyFloat_FromDouble(rate[j]);
            if (x == NULL) {
                goto fail;
            }
            PyList_SET_ITEM(rates, j, x);
        }
    }
    Py_DECREF(q);
    Py_DECREF(vs);
    Py_DECREF(fs);
    if (rate != r) {
        PyMem_Free(rate);
        PyMem_Free(torque);
    }
    return Py_BuildValue("(NN)", rates, torques);
fail:
    Py_XDECREF(q);
    Py_XDECREF(vs);
    Py_XDECREF(fs);
    Py_XDECREF(rates);
    Py_XDECREF(torques);
    if (rate != r) {
        PyMem_Free(rate);
        PyMem_Free(torque);
    }
    return NULL;
}

/* LegIK.solve's arithmetic for one leg; 1 with the angles in out, 0 to leave it to Python. */
static int
leg_ik(const Leg *leg, const double target[3], double out[3])
{
    if (!(isfinite(target[0]) && isfinite(target[1]) && isfinite(target[2]))) {
        return 0;
    }
    double rx = target[0] - leg->hx, ry = target[1] - leg->hy, rz = target[2] - leg->hz;
    double rho = hypot(ry, rz);
    double w = leg->w;
    if (rho < fabs(w) - REACH_TOL) {
        return 0;
    }
    double alpha = atan2(rz, ry);
    double alpha_hip = 0.0;
    if (rho > 0) {
        /* max(-1.0, min(1.0, w / rho)), as Python evaluates it */
        double c = w / rho;
        c = c < 1.0 ? c : 1.0;
        c = c > -1.0 ? c : -1.0;
        alpha_hip = leg->below * acos(c);
    }
    double j0 = remainder(leg->s0 * (alpha - alpha_hip), TAU);
    double big_x = rx - leg->ox;
    double big_z = rho * sin(alpha_hip) - leg->oz;
    double l1 = leg->l1, l2 = leg->l2;
    double dist2 = big_x * big_x + big_z * big_z;
    double cos_gamma = (dist2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2);
    if (!(-1.0 - REACH_TOL <= cos_gamma && cos_gamma <= 1.0 + REACH_TOL)) {
        return 0;
    }
    double c = cos_gamma < 1.0 ? cos_gamma : 1.0;
    c = c > -1.0 ? c : -1.0;
    double gamma = leg->knee * acos(c);
    double j2 = remainder(leg->s2 * (leg->a2 - gamma), TAU);
    double psi_t = atan2(big_z, big_x) - atan2(l2 * sin(gamma), l1 + l2 * cos(gamma));
    double j1 = remainder(leg->s1 * (leg->a1 - psi_t), TAU);
    double j[3] = {j0, j1, j2};
    for (int k = 0; k < 3; k++) {
        if (j[k] <= -Py_MATH_PI) {
            j[k] = Py_MATH_PI;
        }
        if (!(leg->lo[k] - LIMIT_TOL <= j[k] && j[k] <= leg->hi[k] + LIMIT_TOL)) {
            return 0;
        }
        /* min(max(value, lo), hi) */
        double v = j[k];
        v = leg->lo[k] > v ? leg->lo[k] : v;
        out[k] = leg->hi[k] < v ? leg->hi[k] : v;
    }
    return 1;
}

static PyObject *
Legs_solve_ik(LegsObject *self, PyObject *targets_obj)
{
    Py_ssize_t n = self->n_legs;
    PyObject *targets = fast_sequence(targets_obj, n, "targets", PyExc_ValueError);
    if (targets == NULL) {
        return NULL;
    }
    if (PySequence_Fast_GET_SIZE(targets) != n) {
        PyErr_Format(PyExc_ValueError, "targets: %zd; expected one per leg (%zd)",
                     PySequence_Fast_GET_SIZE(targets), n);
        Py_DECREF(targets);
        return NULL;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        Py_DECREF(targets);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        double target[3], j[3];
        if (row3(targets, k, target, "targets") < 0) {
            Py_DECREF(targets);
            Py_DECREF(out);
            return NULL;
        }
        PyObject *item = leg_ik(&self->leg[k], target, j) ? triple(j[0], j[1], j[2])
                                                          : Py_NewRef(Py_None);
        if (item == NULL) {
            Py_DECREF(targets);
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, item);
    }
    Py_DECREF(targets);
    return out;
}

/* Legs.joint_targets: the legs' impedance targets from foot targets (see the module docstring
 * and LegKinematics.joint_targets_python, whose steps and order this follows). */
static PyObject *
Legs_joint_targets(LegsObject *self, PyObject *args)
{
    PyObject *q_obj, *rot_obj, *t_obj, *v_obj, *f_obj, *stance_obj, *gains_obj, *limits_obj;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &q_obj, &rot_obj, &t_obj, &v_obj, &f_obj,
                          &stance_obj, &gains_obj, &limits_obj)) {
        return NULL;
    }
    Py_ssize_t nj = self->n_joints, n = self->n_legs;
    PyObject *q = NULL, *rot = NULL, *ts = NULL, *vs = NULL, *fs = NULL, *stance = NULL;
    PyObject *gains = NULL, *limits = NULL, *unsolved = NULL, *result = NULL;
    PyObject *lists[5] = {NULL, NULL, NULL, NULL, NULL};
    double *buf = NULL;
    if ((q = fast_sequence(q_obj, nj, "positions", PyExc_IndexError)) == NULL ||
        (rot = fast_sequence(rot_obj, 3, "rotation", PyExc_ValueError)) == NULL ||
        (ts = fast_sequence(t_obj, n, "foot_targets", PyExc_ValueError)) == NULL ||
        (vs = fast_sequence(v_obj, n, "foot_velocities", PyExc_ValueError)) == NULL ||
        (fs = fast_sequence(f_obj, n, "foot_forces", PyExc_ValueError)) == NULL ||
        (stance = fast_sequence(stance_obj, n, "stance", PyExc_ValueError)) == NULL ||
        (gains = fast_sequence(gains_obj, 4, "gains", PyExc_ValueError)) == NULL ||
        (limits = fast_sequence(limits_obj, nj, "limits", PyExc_ValueError)) == NULL) {
        goto done;
    }
    if (PySequence_Fast_GET_SIZE(ts) != n || PySequence_Fast_GET_SIZE(vs) != n ||
        PySequence_Fast_GET_SIZE(fs) != n || PySequence_Fast_GET_SIZE(stance) != n ||
        PySequence_Fast_GET_SIZE(rot) != 3 || PySequence_Fast_GET_SIZE(gains) != 4 ||
        PySequence_Fast_GET_SIZE(limits) != nj) {
        PyErr_Format(PyExc_ValueError,
                     "joint_targets: a 3 x 3 rotation, one target, velocity, force and stance "
                     "flag per leg (%zd), 4 gains and one limit pair per joint (%zd)", n, nj);
        goto done;
    }
    /* R_rp's rows a, b, c: body -> horizontal; here horizontal -> body, R_rp^T h */
    double r[3][3];
    for (int k = 0; k < 3; k++) {
        if (row3(rot, k, r[k], "rotation") < 0) {
            goto done;
        }
    }
    double g[4];
    for (int k = 0; k < 4; k++) {
        g[k] = item_double(gains, k);
        if (g[k] == -1.0 && PyErr_Occurred()) {
            goto done;
        }
    }
    /* per joint: q, kp, kd, position, velocity (rates), torque, torque limit, velocity limit */
    buf = PyMem_Calloc((size_t)(8 * nj), sizeof(double));
    if (buf == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *qv = buf, *kp = buf + nj, *kd = buf + 2 * nj, *pos = buf + 3 * nj;
    double *rate = buf + 4 * nj, *torque = buf + 5 * nj, *t_lim = buf + 6 * nj;
    double *v_lim = buf + 7 * nj;
    for (Py_ssize_t j = 0; j < nj; j++) {
        qv[j] = item_double(q, j);
        if (qv[j] == -1.0 && PyErr_Occurred()) {
            goto done;
        }
        pos[j] = qv[j];
        double pair[2];
        PyObject *lim = PySequence_Fast(PySequence_Fast_GET_ITEM(limits, j), "limits");
        if (lim == NULL) {
            goto done;
        }
        if (PySequence_Fast_GET_SIZE(lim) != 2) {
            PyErr_Format(PyExc_ValueError, "limits: pair %zd has %zd values; expected 2", j,
                         PySequence_Fast_GET_SIZE(lim));
            Py_DECREF(lim);
            goto done;
        }
        for (int k = 0; k < 2; k++) {
            pair[k] = item_double(lim, k);
            if (pair[k] == -1.0 && PyErr_Occurred()) {
                Py_DECREF(lim);
                goto done;
            }
        }
        Py_DECREF(lim);
        t_lim[j] = pair[0];
        v_lim[j] = pair[1];
    }
    if ((unsolved = PyList_New(0)) == NULL) {
        goto done;
    }
    /* rates and torques (rates_and_torques), then the IK (solve_feet), leg by leg */
    int singular = 0;
    double tb[MAX_LEGS][3];
    int on[MAX_LEGS];
    for (Py_ssize_t k = 0; k < n; k++) {
        const Leg *leg = &self->leg[k];
        double th[3], vh[3], fh[3], v[3], f[3], jq[3];
        if (row3(ts, k, th, "foot_targets") < 0 || row3(vs, k, vh, "foot_velocities") < 0 ||
            row3(fs, k, fh, "foot_forces") < 0) {
            goto done;
        }
        for (int i = 0; i < 3; i++) {
            tb[k][i] = r[0][i] * th[0] + r[1][i] * th[1] + r[2][i] * th[2];
            v[i] = r[0][i] * vh[0] + r[1][i] * vh[1] + r[2][i] * vh[2];
            f[i] = r[0][i] * fh[0] + r[1][i] * fh[1] + r[2][i] * fh[2];
        }
        int flag = PyObject_IsTrue(PySequence_Fast_GET_ITEM(stance, k));
        if (flag < 0) {
            goto done;
        }
        on[k] = flag;
        Plane p;
        jq[0] = qv[leg->i[0]];
        jq[1] = qv[leg->i[1]];
        jq[2] = qv[leg->i[2]];
        if (leg_plane(leg, jq, &p) < 0) {
            goto done;
        }
        singular |= leg_rates_torques(leg, &p, v, f, rate, torque);
    }
    if (singular) {
        for (Py_ssize_t j = 0; j < nj; j++) {
            rate[j] = 0.0;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        const Leg *leg = &self->leg[k];
        double angles[3];
        if (leg_ik(leg, tb[k], angles)) {
            for (int i = 0; i < 3; i++) {
                pos[leg->i[i]] = angles[i];
            }
        }
        else {
            PyObject *item = Py_BuildValue("(n(ddd))", k, tb[k][0], tb[k][1], tb[k][2]);
            if (item == NULL || PyList_Append(unsolved, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
        }
        for (int i = 0; i < 3; i++) {
            Py_ssize_t j = leg->i[i];
            kp[j] = on[k] ? g[0] : g[2];
            kd[j] = on[k] ? g[1] : g[3];
            if (!on[k]) {
                torque[j] = 0.0;
            }
        }
    }
    /* clamp (a NaN passes the comparisons), then non-finite -> 0 / the measured position */
    for (Py_ssize_t j = 0; j < nj; j++) {
        double t = torque[j], lt = t_lim[j];
        t = t > lt ? lt : t < -lt ? -lt : t;
        torque[j] = isfinite(t) ? t : 0.0;
        double v = rate[j], lv = v_lim[j];
        v = v > lv ? lv : v < -lv ? -lv : v;
        rate[j] = isfinite(v) ? v : 0.0;
        if (!isfinite(pos[j])) {
            pos[j] = qv[j];
        }
    }
    const double *columns[5] = {kp, kd, pos, rate, torque};
    for (int c = 0; c < 5; c++) {
        if ((lists[c] = PyList_New(nj)) == NULL) {
            goto done;
        }
        for (Py_ssize_t j = 0; j < nj; j++) {
            PyObject *x = PyFloat_FromDouble(columns[c][j]);
            if (x == NULL) {
                goto done;
            }
            PyList_SET_ITEM(lists[c], j, x);
        }
    }
    result = Py_BuildValue("(OOOOOO)", lists[0], lists[1], lists[2], lists[3], lists[4],
                           unsolved);
done:
    Py_XDECREF(q);
    Py_XDECREF(rot);
    Py_XDECREF(ts);
    Py_XDECREF(vs);
    Py_XDECREF(fs);
    Py_XDECREF(stance);
    Py_XDECREF(gains);
    Py_XDECREF(limits);
    Py_XDECREF(unsolved);
    for (int c = 0; c < 5; c++) {
        Py_XDECREF(lists[c]);
    }
    PyMem_Free(buf);
    return result;
}

/* ---- the state estimator's step ----------------------------------------------------------- */

static int read_doubles(PyObject *obj, Py_ssize_t n, double *out, const char *what);

/* A writable C-contiguous buffer of exactly `n` items of `itemsize` bytes with format `fmt`
 * (one character, optionally after '<' or '='); 0, or -1 with a ValueError / TypeError. */
static int
writable_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t n, Py_ssize_t itemsize, char fmt,
                const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        return -1;
    }
    const char *f = view->format;
    if (f != NULL && (f[0] == '<' || f[0] == '=')) {
        f++;
    }
    if (view->itemsize != itemsize || f == NULL || f[0] != fmt || f[1] != '\0' ||
        view->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected a writable buffer of %zd '%c' items", what,
                     n, fmt);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The math.fsum of `n` doubles (Python's own function: its exact rounding and its errors). */
static int
python_fsum(const double *values, Py_ssize_t n, double *out)
{
    static PyObject *fsum = NULL;
    if (fsum == NULL) {
        PyObject *math = PyImport_ImportModule("math");
        if (math == NULL) {
            return -1;
        }
        fsum = PyObject_GetAttrString(math, "fsum");
        Py_DECREF(math);
        if (fsum == NULL) {
            return -1;
        }
    }
    PyObject *list = PyList_New(n);
    if (list == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyFloat_FromDouble(values[i]);
        if (item == NULL) {
            Py_DECREF(list);
            return -1;
        }
        PyList_SET_ITEM(list, i, item);
    }
    PyObject *sum = PyObject_CallOneArg(fsum, list);
    Py_DECREF(list);
    if (sum == NULL) {
        return -1;
    }
    *out = PyFloat_AsDouble(sum);
    Py_DECREF(sum);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* The filter state's layout (StateEstimator._filter): height, body velocity (3), x, y, then one
 * contact flag per leg (1.0 in contact, 0.0 not). */
enum { F_HEIGHT = 0, F_V = 1, F_X = 4, F_Y = 5, F_CONTACT = 6 };

static PyObject *
Legs_estimate(LegsObject *self, PyObject *args)
{
    PyObject *q_obj, *qd_obj, *tau_obj, *rot_obj, *radius_obj, *filter_obj, *out_obj,
        *contact_obj;
    double singular_det, wx, wy, wz, ax, ay, az, on, off, dt, tau_v;
    if (!PyArg_ParseTuple(args, "OOOdOddddddddOOddOO", &q_obj, &qd_obj, &tau_obj, &singular_det,
                          &rot_obj, &wx, &wy, &wz, &ax, &ay, &az, &on, &off, &radius_obj,
                          &filter_obj, &dt, &tau_v, &out_obj, &contact_obj)) {
        return NULL;
    }
    Py_ssize_t nj = self->n_joints, n = self->n_legs;
    PyObject *seq[3] = {NULL, NULL, NULL};
    Py_buffer filter_view, out_view, contact_view;
    int have_filter = 0, have_out = 0, have_contact = 0;
    PyObject *result = NULL;
    double rot[9], radius[MAX_LEGS];
    if (read_doubles(rot_obj, 9, rot, "rotation") < 0 ||
        read_doubles(radius_obj, n, radius, "foot_radius") < 0) {
        return NULL;
    }
    const char *names[3] = {"positions", "velocities", "torques"};
    PyObject *objs[3] = {q_obj, qd_obj, tau_obj};
    for (int k = 0; k < 3; k++) {
        seq[k] = fast_sequence(objs[k], nj, names[k], PyExc_IndexError);
        if (seq[k] == NULL) {
            goto done;
        }
        if (PySequence_Fast_GET_SIZE(seq[k]) != nj) {
            PyErr_Format(PyExc_ValueError, "%s: %zd values; expected %zd", names[k],
                         PySequence_Fast_GET_SIZE(seq[k]), nj);
            goto done;
        }
    }
    if (writable_buffer(filter_obj, &filter_view, F_CONTACT + n, sizeof(double), 'd',
                        "filter") < 0) {
        goto done;
    }
    have_filter = 1;
    if (writable_buffer(out_obj, &out_view, 3 * nj + 9 * n + 18, sizeof(double), 'd', "out") <
        0) {
        goto done;
    }
    have_out = 1;
    if (writable_buffer(contact_obj, &contact_view, n, 1, '?', "contact") < 0) {
        goto done;
    }
    have_contact = 1;
    double *f = (double *)filter_view.buf, *o = (double *)out_view.buf;
    char *contact = (char *)contact_view.buf;
    /* everything is computed into locals first: an error in the legs' kinematics leaves the
     * filter and the outputs as they were, as the Python reference's does */
    double q[64], qd[64], tau[64];
    if (nj > 64) {
        PyErr_SetString(PyExc_ValueError, "estimate: more than 64 joints");
        goto done;
    }
    double *cols[3] = {q, qd, tau};
    for (int k = 0; k < 3; k++) {
        for (Py_ssize_t i = 0; i < nj; i++) {
            double v = item_double(seq[k], i);
            if (v == -1.0 && PyErr_Occurred()) {
                goto done;
            }
            cols[k][i] = v;
        }
    }
    double pos[MAX_LEGS][3], vel[MAX_LEGS][3], force[MAX_LEGS][3];
    for (Py_ssize_t k = 0; k < n; k++) {
        const Leg *leg = &self->leg[k];
        double a[3] = {q[leg->i[0]], q[leg->i[1]], q[leg->i[2]]};
        Plane p;
        if (leg_plane(leg, a, &p) < 0) {
            goto done;
        }
        double x = leg->ox + p.lct, w = leg->w, s0 = leg->s0;
        pos[k][0] = leg->hx + x;
        pos[k][1] = leg->hy + p.c0 * w - p.sn0 * p.z;
        pos[k][2] = leg->hz + p.sn0 * w + p.c0 * p.z;
        double det = s0 * p.z * p.plane_det;
        double d0 = qd[leg->i[0]], d1 = qd[leg->i[1]], d2 = qd[leg->i[2]];
        double vy = -s0 * p.z * d0;
        double vz = s0 * w * d0 + p.dz1 * d1 + p.dz2 * d2;
        vel[k][0] = p.dx1 * d1 + p.dx2 * d2;
        vel[k][1] = p.c0 * vy - p.sn0 * vz;
        vel[k][2] = p.sn0 * vy + p.c0 * vz;
        if (fabs(det) >= singular_det) {
            double t0 = tau[leg->i[0]], t1 = tau[leg->i[1]], t2 = tau[leg->i[2]];
            if (p.plane_det == 0.0 || p.z == 0.0) { /* only with singular_det = 0 */
                division_by_zero();
                goto done;
            }
            double gx = (t2 * p.dz1 - t1 * p.dz2) / p.plane_det;
            double gz = (t1 * p.dx2 - t2 * p.dx1) / p.plane_det;
            double gy = (s0 * t0 + w * gz) / p.z;
            force[k][0] = gx;
            force[k][1] = p.c0 * gy - p.sn0 * gz;
            force[k][2] = p.sn0 * gy + p.c0 * gz;
        }
        else {
            force[k][0] = force[k][1] = force[k][2] = Py_NAN;
        }
    }
    /* per-leg decisions (StateEstimator.update_python's loop, in its order of operations) */
    double ux = rot[6], uy = rot[7], uz = rot[8];
    double ground[MAX_LEGS], stance_ground[MAX_LEGS];
    Py_ssize_t k_in = 0;
    double px = 0.0, py = 0.0, pz = 0.0, vx = 0.0, vy = 0.0, vz = 0.0;
    char now[MAX_LEGS];
    for (Py_ssize_t i = 0; i < n; i++) {
        double x = pos[i][0], y = pos[i][1], z = pos[i][2];
        double height_if_down = radius[i] - (x * ux + y * uy + z * uz);
        ground[i] = height_if_down;
        now[i] = 0;
        double threshold = f[F_CONTACT + i] != 0.0 ? off : on;
        if (force[i][0] * ux + force[i][1] * uy + force[i][2] * uz > threshold) {
            now[i] = 1;
            stance_ground[k_in] = height_if_down;
            k_in++;
            px += x;
            py += y;
            pz += z;
            vx += vel[i][0];
            vy += vel[i][1];
            vz += vel[i][2];
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        f[F_CONTACT + i] = now[i] ? 1.0 : 0.0;
        contact[i] = now[i];
    }
    /* height from the feet in contact (gravity-aligned frame) */
    if (k_in) {
        double sum;
        if (python_fsum(stance_ground, k_in, &sum) < 0) {
            goto done;
        }
        double height = sum / (double)k_in;
        if (isfinite(height)) {
            f[F_HEIGHT] = height;
        }
    }
    else {
        int have = 0;
        double best = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (isfinite(ground[i]) && (!have || ground[i] > best)) {
                best = ground[i];
                have = 1;
            }
        }
        if (have) {
            f[F_HEIGHT] = best; /* the lowest foot: largest body height */
        }
    }
    /* body velocity by leg odometry over stance feet, low-pass filtered */
    double vbx = f[F_V], vby = f[F_V + 1], vbz = f[F_V + 2];
    if (k_in) {
        double kk = (double)k_in;
        px = px / kk;
        py = py / kk;
        pz = pz / kk;
        vx = vx / kk;
        vy = vy / kk;
        vz = vz / kk;
        double mx = -(vx + wy * pz - wz * py);
        double my = -(vy + wz * px - wx * pz);
        double mz = -(vz + wx * py - wy * px);
        if (isfinite(mx) && isfinite(my) && isfinite(mz)) {
            double alpha;
            if (tau_v > 0.0) {
                if (tau_v + dt == 0.0) {
                    division_by_zero();
                    goto done;
                }
                alpha = dt / (tau_v + dt);
            }
            else {
                alpha = 1.0;
            }
            vbx += alpha * (mx - vbx);
            vby += alpha * (my - vby);
            vbz += alpha * (mz - vbz);
            f[F_V] = vbx;
            f[F_V + 1] = vby;
            f[F_V + 2] = vbz;
        }
    }
    double wvx = rot[0] * vbx + rot[1] * vby + rot[2] * vbz;
    double wvy = rot[3] * vbx + rot[4] * vby + rot[5] * vbz;
    double wvz = rot[6] * vbx + rot[7] * vby + rot[8] * vbz;
    f[F_X] += wvx * dt;
    f[F_Y] += wvy * dt;
    /* the outputs: joints, feet, then the body's six 3-vectors (see StateEstimator._views) */
    memcpy(o, q, (size_t)nj * sizeof(double));
    memcpy(o + nj, qd, (size_t)nj * sizeof(double));
    memcpy(o + 2 * nj, tau, (size_t)nj * sizeof(double));
    double *feet = o + 3 * nj;
    for (Py_ssize_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            feet[3 * i + c] = pos[i][c];
            feet[3 * n + 3 * i + c] = vel[i][c];
            feet[6 * n + 3 * i + c] = force[i][c];
        }
    }
    double *body = feet + 9 * n;
    double values[18] = {
        f[F_X], f[F_Y], f[F_HEIGHT],
        vbx, vby, vbz,
        wx, wy, wz,
        wvx, wvy, wvz,
        rot[0] * wx + rot[1] * wy + rot[2] * wz,
        rot[3] * wx + rot[4] * wy + rot[5] * wz,
        rot[6] * wx + rot[7] * wy + rot[8] * wz,
        ax, ay, az,
    };
    memcpy(body, values, sizeof(values));
    Py_INCREF(Py_None);
    result = Py_None;
done:
    for (int k = 0; k < 3; k++) {
        Py_XDECREF(seq[k]);
    }
    if (have_filter) {
        PyBuffer_Release(&filter_view);
    }
    if (have_out) {
        PyBuffer_Release(&out_view);
    }
    if (have_contact) {
        PyBuffer_Release(&contact_view);
    }
    return result;
}

static PyObject *
Legs_get_count(LegsObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->n_legs);
}

static PyMethodDef Legs_methods[] = {
    {"evaluate", (PyCFunction)Legs_evaluate, METH_VARARGS,
     "evaluate(q, qd, tau, singular_det) -> (positions, velocities, forces, dets)"},
    {"rates_and_torques", (PyCFunction)Legs_rates_and_torques, METH_VARARGS,
     "rates_and_torques(q, foot_velocities, foot_forces) -> (rates or None, torques)"},
    {"solve_ik", (PyCFunction)Legs_solve_ik, METH_O,
     "solve_ik(targets) -> list of (j0, j1, j2) or None per leg"},
    {"joint_targets", (PyCFunction)Legs_joint_targets, METH_VARARGS,
     "joint_targets(q, rotation, targets, velocities, forces, stance, gains, limits)"
     " -> (kp, kd, position, velocity, torque, unsolved)"},
    {"estimate", (PyCFunction)Legs_estimate, METH_VARARGS,
     "estimate(q, qd, tau, singular_det, rotation, wx, wy, wz, ax, ay, az, contact_on, "
     "contact_off, foot_radius, filter, dt, velocity_tau, out, contact) -> None"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Legs_getset[] = {
    {"count", (getter)Legs_get_count, NULL, "number of legs", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LegsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "jointbus.robots.hb50.legged._leg_accel.Legs",
    .tp_basicsize = sizeof(LegsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The per-leg constants of a quadruped (see the module docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Legs_init,
    .tp_methods = Legs_methods,
    .tp_getset = Legs_getset,
};

/* ---- stance forces -------------------------------------------------------------------------- */

static PyObject *
stance_dual(PyObject *module, PyObject *args)
{
    PyObject *feet_obj, *stance_obj, *wrench_obj, *reg_obj;
    double fz_min, fz_max, mu;
    if (!PyArg_ParseTuple(args, "OOOOddd", &feet_obj, &stance_obj, &wrench_obj, &reg_obj,
                          &fz_min, &fz_max, &mu)) {
        return NULL;
    }
    PyObject *feet = NULL, *stance = NULL, *wrench = NULL, *reg = NULL, *out = NULL;
    if ((feet = fast_sequence(feet_obj, 0, "feet", PyExc_ValueError)) == NULL ||
        (stance = fast_sequence(stance_obj, 0, "stance", PyExc_ValueError)) == NULL ||
        (wrench = fast_sequence(wrench_obj, 6, "wrench", PyExc_ValueError)) == NULL ||
        (reg = fast_sequence(reg_obj, 6, "regularisation", PyExc_ValueError)) == NULL) {
        goto fail;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(feet);
    if (PySequence_Fast_GET_SIZE(stance) != n || n > 64) {
        PyErr_Format(PyExc_ValueError, "stance: %zd flags for %zd feet (at most 64)",
                     PySequence_Fast_GET_SIZE(stance), n);
        goto fail;
    }
    double b[6], a[6];
    for (int k = 0; k < 6; k++) {
        b[k] = item_double(wrench, k);
        a[k] = item_double(reg, k);
        if ((b[k] == -1.0 || a[k] == -1.0) && PyErr_Occurred()) {
            goto fail;
        }
    }
    double r[64][3];
    int on[64];
    Py_ssize_t k_on = 0;
    double cx = 0.0, cy = 0.0, cz = 0.0;
    double qxx = 0.0, qyy = 0.0, qzz = 0.0, qxy = 0.0, qxz = 0.0, qyz = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int flag = PyObject_IsTrue(PySequence_Fast_GET_ITEM(stance, i));
        if (flag < 0) {
            goto fail;
        }
        on[i] = flag;
        if (!flag) {
            continue;
        }
        if (row3(feet, i, r[i], "feet") < 0) {
            goto fail;
        }
        double rx = r[i][0], ry = r[i][1], rz = r[i][2];
        k_on++;
        cx += rx;
        cy += ry;
        cz += rz;
        qxx += ry * ry + rz * rz;
        qyy += rx * rx + rz * rz;
        qzz += rx * rx + ry * ry;
        qxy -= rx * ry;
        qxz -= rx * rz;
        qyz -= ry * rz;
    }
    if ((out = PyList_New(n)) == NULL) {
        goto fail;
    }
    if (k_on == 0) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *zero = triple(0.0, 0.0, 0.0);
            if (zero == NULL) {
                goto fail;
            }
            PyList_SET_ITEM(out, i, zero);
        }
        goto done;
    }
    double k = (double)k_on;
    double d0 = 1.0 / (k + a[0]), d1 = 1.0 / (k + a[1]), d2 = 1.0 / (k + a[2]);
    double s00 = qxx + a[3] - (d1 * cz * cz + d2 * cy * cy);
    double s11 = qyy + a[4] - (d0 * cz * cz + d2 * cx * cx);
    double s22 = qzz + a[5] - (d0 * cy * cy + d1 * cx * cx);
    double s01 = qxy + d2 * cx * cy;
    double s02 = qxz + d1 * cx * cz;
    double s12 = qyz + d0 * cy * cz;
    double px = d0 * b[0], py = d1 * b[1], pz = d2 * b[2];
    double r0 = b[3] - (cy * pz - cz * py);
    double r1 = b[4] - (cz * px - cx * pz);
    double r2 = b[5] - (cx * py - cy * px);
    double a00 = s11 * s22 - s12 * s12;
    double a01 = s02 * s12 - s01 * s22;
    double a02 = s01 * s12 - s02 * s11;
    double a11 = s00 * s22 - s02 * s02;
    double a12 = s01 * s02 - s00 * s12;
    double a22 = s00 * s11 - s01 * s01;
    double det = s00 * a00 + s01 * a01 + s02 * a02;
    if (det == 0.0) {
        division_by_zero();
        goto fail;
    }
    double inv_det = 1.0 / det;
    double vx = (a00 * r0 + a01 * r1 + a02 * r2) * inv_det;
    double vy = (a01 * r0 + a11 * r1 + a12 * r2) * inv_det;
    double vz = (a02 * r0 + a12 * r1 + a22 * r2) * inv_det;
    double ux = d0 * (b[0] + cy * vz - cz * vy);
    double uy = d1 * (b[1] + cz * vx - cx * vz);
    double uz = d2 * (b[2] + cx * vy - cy * vx);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item;
        if (!on[i]) {
            item = triple(0.0, 0.0, 0.0);
        }
        else {
            double rx = r[i][0], ry = r[i][1], rz = r[i][2];
            double fx = ux + vy * rz - vz * ry;
            double fy = uy + vz * rx - vx * rz;
            /* min(max(f, fz_min), fz_max): a NaN stays NaN, as in Python */
            double fz = uz + vx * ry - vy * rx;
            fz = fz_min > fz ? fz_min : fz;
            fz = fz_max < fz ? fz_max : fz;
            double tangential = hypot(fx, fy);
            double limit = mu * fz;
            if (tangential > limit) {
                double scale = limit / (tangential > 1e-12 ? tangential : 1e-12);
                fx *= scale;
                fy *= scale;
            }
            item = triple(fx, fy, fz);
        }
        if (item == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(out, i, item);
    }
done:
    Py_DECREF(feet);
    Py_DECREF(stance);
    Py_DECREF(wrench);
    Py_DECREF(reg);
    return out;
fail:
    Py_XDECREF(feet);
    Py_XDECREF(stance);
    Py_XDECREF(wrench);
    Py_XDECREF(reg);
    Py_XDECREF(out);
    return NULL;
}


/* ---- the walking controller's plan ------------------------------------------------------------ */

/* `n` doubles from `obj`: a C-contiguous float64 buffer (a numpy array, an array('d')) of `n`
 * items, or a list / tuple of `n` numbers or of `n / 3` rows of three. 0, or -1 with an error. */
static int
read_doubles(PyObject *obj, Py_ssize_t n, double *out, const char *what)
{
    if (PyObject_CheckBuffer(obj)) {
        Py_buffer view;
        if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
            int ok = view.itemsize == (Py_ssize_t)sizeof(double) && view.format != NULL &&
                     (strcmp(view.format, "d") == 0 || strcmp(view.format, "<d") == 0 ||
                      strcmp(view.format, "=d") == 0) &&
                     view.len == n * (Py_ssize_t)sizeof(double);
            if (ok) {
                memcpy(out, view.buf, (size_t)view.len);
            }
            PyBuffer_Release(&view);
            if (ok) {
                return 0;
            }
        }
        else {
            PyErr_Clear();
        }
    }
    PyObject *seq = PySequence_Fast(obj, what);
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t size = PySequence_Fast_GET_SIZE(seq);
    int status = 0;
    if (size == n) {
        for (Py_ssize_t i = 0; i < n && status == 0; i++) {
            out[i] = item_double(seq, i);
            if (out[i] == -1.0 && PyErr_Occurred()) {
                status = -1;
            }
        }
    }
    else if (size * 3 == n) {
        for (Py_ssize_t i = 0; i < size && status == 0; i++) {
            status = row3(seq, i, out + 3 * i, what);
        }
    }
    else {
        PyErr_Format(PyExc_ValueError, "%s: %zd values; expected %zd", what, size, n);
        status = -1;
    }
    Py_DECREF(seq);
    return status;
}

/* Python's min(max(x, lo), hi): a NaN stays NaN. */
static double
clamp(double x, double lo, double hi)
{
    x = lo > x ? lo : x;
    return hi < x ? hi : x;
}

/* swing._min_jerk: the blend 0 ... 1 at s and its derivative. */
static void
min_jerk(double s, double *b, double *db)
{
    if (s <= 0.0) {
        *b = 0.0;
        *db = 0.0;
        return;
    }
    if (s >= 1.0) {
        *b = 1.0;
        *db = 0.0;
        return;
    }
    double s2 = s * s;
    *b = s2 * s * (10.0 - 15.0 * s + 6.0 * s2);
    *db = 30.0 * s2 * (1.0 - 2.0 * s + s2);
}

/* math.remainder(x, tau); Python refuses an infinite x. */
static int
remainder_tau(double x, double *out)
{
    if (isinf(x)) {
        PyErr_SetString(PyExc_ValueError, "math domain error");
        return -1;
    }
    *out = remainder(x, TAU);
    return 0;
}

enum {
    G_STEP_HEIGHT, G_RAIBERT, G_MAX_REACH, G_COM_X, G_COM_Z, G_HEIGHT_KP, G_HEIGHT_KD,
    G_VELOCITY_KP, G_ATTITUDE_KP, G_ATTITUDE_KD, G_YAW_KP, G_YAW_KD, G_MASS, G_IX, G_IY, G_IZ,
    G_GRAVITY, N_GAINS
};

static PyObject *
walk_plan(PyObject *module, PyObject *args)
{
    PyObject *rot_obj, *feet_obj, *vel_obj, *omega_obj, *pos_obj, *stance_obj, *progress_obj;
    PyObject *setpoint_obj, *nominal_obj, *radius_obj, *gains_obj, *memory_obj;
    double height_est, stance_time, swing_time, dt;
    int stopped;
    if (!PyArg_ParseTuple(args, "OOOOOdOOddpOdOOOO", &rot_obj, &feet_obj, &vel_obj, &omega_obj,
                          &pos_obj, &height_est, &stance_obj, &progress_obj, &stance_time,
                          &swing_time, &stopped, &setpoint_obj, &dt, &nominal_obj, &radius_obj,
                          &gains_obj, &memory_obj)) {
        return NULL;
    }
    PyObject *stance = NULL, *progress = NULL, *feet_c = NULL, *targets = NULL, *velocities = NULL;
    PyObject *result = NULL;
    Py_buffer memory = {0};
    int have_memory = 0;
    double rot[9], vb[3], wb[3], pos[3], sp[4], g[N_GAINS];
    double feet[MAX_LEGS * 3], nominal[MAX_LEGS * 3], radius[MAX_LEGS];
    int on[MAX_LEGS];
    double prog[MAX_LEGS];
    if ((stance = fast_sequence(stance_obj, 0, "stance", PyExc_ValueError)) == NULL) {
        goto fail;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(stance);
    if (n > MAX_LEGS) {
        PyErr_Format(PyExc_ValueError, "stance: %zd legs; at most %d", n, MAX_LEGS);
        goto fail;
    }
    if ((progress = fast_sequence(progress_obj, n, "progress", PyExc_ValueError)) == NULL) {
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        on[i] = PyObject_IsTrue(PySequence_Fast_GET_ITEM(stance, i));
        if (on[i] < 0) {
            goto fail;
        }
        prog[i] = item_double(progress, i);
        if (prog[i] == -1.0 && PyErr_Occurred()) {
            goto fail;
        }
    }
    if (read_doubles(rot_obj, 9, rot, "rotation") < 0 ||
        read_doubles(feet_obj, 3 * n, feet, "foot_position") < 0 ||
        read_doubles(vel_obj, 3, vb, "body_linear_velocity") < 0 ||
        read_doubles(omega_obj, 3, wb, "body_angular_velocity") < 0 ||
        read_doubles(pos_obj, 3, pos, "position") < 0 ||
        read_doubles(setpoint_obj, 4, sp, "setpoint") < 0 ||
        read_doubles(nominal_obj, 3 * n, nominal, "nominal") < 0 ||
        read_doubles(radius_obj, n, radius, "foot_radius") < 0 ||
        read_doubles(gains_obj, N_GAINS, g, "gains") < 0) {
        goto fail;
    }
    if (PyObject_GetBuffer(memory_obj, &memory, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        goto fail;
    }
    have_memory = 1;
    if (memory.len != (7 * n + 3) * (Py_ssize_t)sizeof(double)) {
        PyErr_Format(PyExc_ValueError, "memory: %zd bytes; expected %zd doubles", memory.len,
                     7 * n + 3);
        goto fail;
    }
    double *mem = (double *)memory.buf;
    double *lift = mem + 3 * n, *was = mem + 6 * n, *yaw_mem = mem + 7 * n;
    double vdx = sp[0], vdy = sp[1], wz_des = sp[2], height = sp[3];

    /* frames: R_rp = Rz(-yaw) R, rows a, b, c */
    double r00 = rot[0], r01 = rot[1], r02 = rot[2];
    double r10 = rot[3], r11 = rot[4], r12 = rot[5];
    double r20 = rot[6], r21 = rot[7], r22 = rot[8];
    double yaw = atan2(r10, r00);
    double cy = cos(yaw), sy = sin(yaw);
    double ax = cy * r00 + sy * r10, ay = cy * r01 + sy * r11, az = cy * r02 + sy * r12;
    double bx = -sy * r00 + cy * r10, by = -sy * r01 + cy * r11, bz = -sy * r02 + cy * r12;
    double feet_h[MAX_LEGS][3];
    for (Py_ssize_t i = 0; i < n; i++) {
        double x = feet[3 * i], y = feet[3 * i + 1], z = feet[3 * i + 2];
        feet_h[i][0] = ax * x + ay * y + az * z;
        feet_h[i][1] = bx * x + by * y + bz * z;
        feet_h[i][2] = r20 * x + r21 * y + r22 * z;
    }
    double vhx = ax * vb[0] + ay * vb[1] + az * vb[2];
    double vhy = bx * vb[0] + by * vb[1] + bz * vb[2];
    double vhz = r20 * vb[0] + r21 * vb[1] + r22 * vb[2];
    double whx = ax * wb[0] + ay * wb[1] + az * wb[2];
    double why = bx * wb[0] + by * wb[1] + bz * wb[2];
    double whz = r20 * wb[0] + r21 * wb[1] + r22 * wb[2];
    double roll = atan2(r21, r22);
    double pitch = -asin(clamp(r20, -1.0, 1.0));
    double ox = pos[0], oy = pos[1];
    double yaw_target;
    if (yaw_mem[1] == 0.0 || stopped) {
        yaw_target = yaw;
    }
    else {
        double err;
        if (remainder_tau(yaw_mem[0] + wz_des * dt - yaw, &err) < 0) {
            goto fail;
        }
        yaw_target = yaw + clamp(err, -0.3, 0.3);
    }
    yaw_mem[0] = yaw_target;
    yaw_mem[1] = 1.0;
    if (yaw_mem[2] == 0.0) {
        yaw_mem[2] = 1.0;
        for (Py_ssize_t i = 0; i < n; i++) {
            mem[3 * i] = feet_h[i][0];
            mem[3 * i + 1] = feet_h[i][1];
            mem[3 * i + 2] = feet_h[i][2];
        }
    }

    if ((targets = PyList_New(n)) == NULL || (velocities = PyList_New(n)) == NULL ||
        (feet_c = PyList_New(n)) == NULL) {
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double fx_h = feet_h[i][0], fy_h = feet_h[i][1], fz_h = feet_h[i][2];
        double ground_z = radius[i] - height;
        PyObject *t, *v;
        if (on[i]) {
            if (was[i] == 0.0) {
                mem[3 * i] = fx_h;
                mem[3 * i + 1] = fy_h;
            }
            double tx = mem[3 * i], ty = mem[3 * i + 1];
            double rvx = -(vdx - wz_des * ty), rvy = -(vdy + wz_des * tx);
            tx = tx + rvx * dt;
            ty = ty + rvy * dt;
            mem[3 * i] = tx;
            mem[3 * i + 1] = ty;
            mem[3 * i + 2] = ground_z;
            t = triple(tx, ty, ground_z);
            v = triple(rvx, rvy, 0.0);
        }
        else {
            double *k = lift + 3 * i;
            if (was[i] != 0.0) {
                k[0] = ox + cy * fx_h - sy * fy_h;
                k[1] = oy + sy * fx_h + cy * fy_h;
                k[2] = fz_h;
            }
            double s = prog[i];
            /* swing.raibert_foothold */
            double nx = nominal[3 * i], ny = nominal[3 * i + 1];
            double half = 0.5 * stance_time;
            double t_ahead = (1.0 - s) * swing_time;
            double hx = -wz_des * ny, hy = wz_des * nx;
            double offx = vhx * half + g[G_RAIBERT] * (vhx - vdx) + hx * half;
            double offy = vhy * half + g[G_RAIBERT] * (vhy - vdy) + hy * half;
            double reach = hypot(offx, offy);
            if (reach > g[G_MAX_REACH]) {
                double scale = g[G_MAX_REACH] / reach;
                offx *= scale;
                offy *= scale;
            }
            double fx = nx + offx + vdx * t_ahead, fy = ny + offy + vdy * t_ahead;
            double end[3] = {ox + cy * fx - sy * fy, oy + sy * fx + cy * fy, ground_z - 0.01};
            /* swing.swing_point */
            if (swing_time == 0.0) {
                division_by_zero();
                goto fail;
            }
            double b, db, h, dh, pz, wvz;
            min_jerk(s, &b, &db);
            double rate = 1.0 / swing_time;
            double px = k[0] + (end[0] - k[0]) * b;
            double py = k[1] + (end[1] - k[1]) * b;
            double wvx = (end[0] - k[0]) * db * rate;
            double wvy = (end[1] - k[1]) * db * rate;
            double top = (end[2] > k[2] ? end[2] : k[2]) + g[G_STEP_HEIGHT];
            if (s < 0.5) {
                min_jerk(2.0 * s, &h, &dh);
                pz = k[2] + (top - k[2]) * h;
                wvz = (top - k[2]) * dh * 2.0 * rate;
            }
            else {
                min_jerk(2.0 * s - 1.0, &h, &dh);
                pz = top + (end[2] - top) * h;
                wvz = (end[2] - top) * dh * 2.0 * rate;
            }
            double dx = px - ox, dy = py - oy;
            t = triple(cy * dx + sy * dy, -sy * dx + cy * dy, pz);
            v = triple(cy * wvx + sy * wvy - vhx - (why * fz_h - whz * fy_h),
                       -sy * wvx + cy * wvy - vhy - (whz * fx_h - whx * fz_h),
                       wvz - vhz - (whx * fy_h - why * fx_h));
        }
        if (t == NULL || v == NULL) {
            Py_XDECREF(t);
            Py_XDECREF(v);
            goto fail;
        }
        PyList_SET_ITEM(targets, i, t);
        PyList_SET_ITEM(velocities, i, v);
        was[i] = on[i] ? 1.0 : 0.0;
    }

    /* the wrench for the stance forces (horizontal frame, about the centre of mass) */
    double com_x = g[G_COM_X], com_z = g[G_COM_Z];
    double chx = ax * com_x + ay * 0.0 + az * com_z;
    double chy = bx * com_x + by * 0.0 + bz * com_z;
    double chz = r20 * com_x + r21 * 0.0 + r22 * com_z;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *c = triple(feet_h[i][0] - chx, feet_h[i][1] - chy, feet_h[i][2] - chz);
        if (c == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(feet_c, i, c);
    }
    double a_z = g[G_HEIGHT_KP] * (height - height_est) - g[G_HEIGHT_KD] * vhz;
    double acc_x = clamp(g[G_VELOCITY_KP] * (vdx - vhx), -3.0, 3.0);
    double acc_y = clamp(g[G_VELOCITY_KP] * (vdy - vhy), -3.0, 3.0);
    double acc_z = isfinite(a_z) ? clamp(a_z, -5.0, 5.0) : 0.0;
    double yaw_err;
    if (remainder_tau(yaw_target - yaw, &yaw_err) < 0) {
        goto fail;
    }
    double al_x = -g[G_ATTITUDE_KP] * roll - g[G_ATTITUDE_KD] * whx;
    double al_y = -g[G_ATTITUDE_KP] * pitch - g[G_ATTITUDE_KD] * why;
    double al_z = g[G_YAW_KP] * yaw_err + g[G_YAW_KD] * (wz_des - whz);
    double m = g[G_MASS];
    result = Py_BuildValue(
        "((ddd)(ddd)(ddd))OOO(dddddd)", ax, ay, az, bx, by, bz, r20, r21, r22, feet_c, targets,
        velocities, m * acc_x, m * acc_y, m * acc_z + m * g[G_GRAVITY], g[G_IX] * al_x,
        g[G_IY] * al_y, g[G_IZ] * al_z);
fail:
    if (have_memory) {
        PyBuffer_Release(&memory);
    }
    Py_XDECREF(stance);
    Py_XDECREF(progress);
    Py_XDECREF(feet_c);
    Py_XDECREF(targets);
    Py_XDECREF(velocities);
    return result;
}

static PyMethodDef module_methods[] = {
    {"stance_dual", stance_dual, METH_VARARGS,
     "stance_dual(feet, stance, wrench, regularisation, fz_min, fz_max, mu) -> forces"},
    {"walk_plan", walk_plan, METH_VARARGS,
     "walk_plan(rotation, foot_position, body_linear_velocity, body_angular_velocity, position, "
     "height, stance, progress, stance_time, swing_time, stopped, setpoint, dt, nominal, "
     "foot_radius, gains, memory) -> (rows, feet, targets, velocities, wrench)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_leg_accel",
    "Compiled core of the hb50 control step's per-leg arithmetic (see _leg_accel.c).", -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__leg_accel(void)
{
    if (PyType_Ready(&LegsType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Legs", (PyObject *)&LegsType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
