/*
 * _estimate_accel: the per-step arithmetic of the walking estimator -- contacts, leg odometry,
 * the per-axis Kalman filter of the body velocity, position and height (optional compiled core
 * of jointbus.robots.hb50.legged.walking_estimator.WalkingEstimator.update).
 *
 * Where it sits: jointbus.robots.hb50.legged. walking_estimator.py loads this module when it was
 * built (setup.py marks it optional; JOINTBUS_NO_ACCEL=1 turns it off) and otherwise runs its
 * pure-Python reference, WalkingEstimator.update_python, which computes the same numbers;
 * tests/robots/hb50/legged/test_walking_estimator.py holds the two together, bit for bit, on
 * random inputs and evolving filter states.
 *
 * Why it exists: update runs every control step (2 ms, or 1 ms on a 1 kHz bridge) while the robot
 * walks: a rotation from the quaternion, a pass over four feet, three filter axes, two 3 x 3
 * products -- some 150 float operations on boxed Python floats after unpacking five arrays into
 * lists (tolist), ~8 us per update on the development VM. Here it is one call on the arrays'
 * memory (~0.5 us; the update, with Python building the arrays and the EstimatedState, ~4 us).
 * The formulas and their order of operations are those of update_python (built with
 * -ffp-contract=off, so no fused multiply-add changes a rounding), so the results are equal to
 * the last bit, NaN and infinity branches included.
 *
 * update(state, orientation, foot_force, foot_position, foot_velocity, foot_radius, stance,
 *        acceleration, angular_velocity, dt, contact_force, accel_variance, odometry_variance,
 *        height)
 *   -> (contact, (x, y, height), height, body_linear_velocity, world_linear_velocity) or None
 *
 *   state: the filter state, a writable C-contiguous buffer of 9 doubles (an array.array('d')),
 *   updated in place: v (3, m/s, world frame), var (3, (m/s)^2), x, y (m), height (m; NaN while
 *   unknown). orientation: the body's unit quaternion (an object with float attributes w, x, y,
 *   z). foot_force (N), foot_position (m), foot_velocity (m/s): (n, 3) float64 arrays in the body
 *   frame; foot_radius (n,) m; stance: n truth values (a tuple or list, or a (n,) bool array);
 *   acceleration: the IMU's specific force, m/s^2, body frame (a (3,) float64 array, or a tuple
 *   or list of 3 floats); angular_velocity (3,) rad/s, body frame; dt s (a float);
 *   contact_force N, accel_variance = accel_noise^2 and odometry_variance = odometry_noise^2 as
 *   Python computes them (floats); height: what the result's height is while the filter's is not
 *   finite (the base estimate's; returned as the same object). Arrays may be strided (any
 *   float64 buffer of that shape, native byte order).
 *
 *   Returns None, with the state untouched, when an input is not of those kinds (another dtype,
 *   shape or type, more than MAX_FEET feet, a dt that is not a float): the caller then runs the
 *   Python reference, which either computes the same thing or raises what it raises today.
 *   Errors: TypeError for constants that are not numbers, TypeError / ValueError for a state
 *   that is not 9 doubles (the state untouched); whatever bool() of a stance flag raises (the
 *   state untouched); ZeroDivisionError where the reference divides by zero (a variance and
 *   odometry_variance both 0), with the state changed as far as the reference changes it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <string.h>

#define MAX_FEET 16
#define STATE_SIZE 9
#define N_ARGS 14
/* the flat filter state: v[3], var[3], x, y, height */
enum { S_V = 0, S_VAR = 3, S_X = 6, S_Y = 7, S_HEIGHT = 8 };
static const double GRAVITY = 9.81; /* m/s^2, along the world's z */

/* An exception of the kinds "this input is not a buffer of that kind" raises (then the caller's
 * reference takes the input); 1 if so, with the exception cleared. */
static int
clear_if_unsupported(void)
{
    if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError) ||
        PyErr_ExceptionMatches(PyExc_BufferError)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

/* Whether a buffer format is one float64 in native byte order. */
static int
is_float64(const char *f)
{
    if (f == NULL) {
        return 0;
    }
#if PY_LITTLE_ENDIAN
    const char native = '<';
#else
    const char native = '>';
#endif
    if (f[0] == '@' || f[0] == '=' || f[0] == native) {
        f++;
    }
    return f[0] == 'd' && f[1] == '\0';
}

/* A read-only view of `obj` as a float64 array of shape (rows, cols) -- with rows < 0, shape
 * (cols,) -- any strides. 1 on success (release the view), 0 when `obj` is not such an array (no
 * exception set, nothing to release), -1 with an exception. */
static int
float_view(PyObject *obj, Py_buffer *view, Py_ssize_t rows, Py_ssize_t cols)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO) < 0) {
        return clear_if_unsupported() ? 0 : -1;
    }
    int shaped = rows < 0 ? view->ndim == 1 && view->shape[0] == cols
                          : view->ndim == 2 && view->shape[0] == rows && view->shape[1] == cols;
    if (!shaped || view->itemsize != (Py_ssize_t)sizeof(double) || !is_float64(view->format) ||
        view->strides == NULL || view->suboffsets != NULL) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

/* Item (i, j) of a 2-D float64 view, or item i of a 1-D one (j = 0). */
static double
at(const Py_buffer *view, Py_ssize_t i, Py_ssize_t j)
{
    double x;
    const char *p = (const char *)view->buf + i * view->strides[0];
    if (view->ndim == 2) {
        p += j * view->strides[1];
    }
    memcpy(&x, p, sizeof(double));
    return x;
}

/* A float attribute of `obj` (exactly a float, as a Quaternion holds): 1 and *out, 0 when it is
 * missing or of another type (the reference then says what is wrong), -1 with an exception. */
static int
float_attr(PyObject *obj, PyObject *name, double *out)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    int ok = PyFloat_CheckExact(value);
    if (ok) {
        *out = PyFloat_AS_DOUBLE(value);
    }
    Py_DECREF(value);
    return ok;
}

/* The n stance flags as 0 / 1 (bool() of each, as Python's `bool(stance[i])`): 1 on success, 0
 * when `obj` is not a tuple, a list or a (n,) bool buffer, -1 with an exception. */
static int
stance_flags(PyObject *obj, Py_ssize_t n, int *on)
{
    if (PyTuple_CheckExact(obj) || PyList_CheckExact(obj)) {
        if (PySequence_Fast_GET_SIZE(obj) != n) {
            return 0;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            /* a new reference: bool() may run Python code that changes a list */
            PyObject *item = PySequence_Fast_GET_ITEM(obj, i);
            Py_INCREF(item);
            int flag = PyObject_IsTrue(item);
            Py_DECREF(item);
            if (flag < 0) {
                return -1;
            }
            on[i] = flag;
            if (PySequence_Fast_GET_SIZE(obj) != n) {
                return 0;
            }
        }
        return 1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_RECORDS_RO) < 0) {
        return clear_if_unsupported() ? 0 : -1;
    }
    int ok = view.ndim == 1 && view.shape[0] == n && view.itemsize == 1 &&
             view.format != NULL && strcmp(view.format, "?") == 0 && view.strides != NULL &&
             view.suboffsets == NULL;
    if (ok) {
        for (Py_ssize_t i = 0; i < n; i++) {
            on[i] = ((const unsigned char *)view.buf)[i * view.strides[0]] != 0;
        }
    }
    PyBuffer_Release(&view);
    return ok;
}

/* The acceleration as three doubles: a (3,) float64 buffer, or a tuple or list of 3 floats (the
 * values np.asarray(..., dtype=np.float64) gives for them). 1, 0 (another kind), -1. */
static int
acceleration3(PyObject *obj, double a[3])
{
    if (PyTuple_CheckExact(obj) || PyList_CheckExact(obj)) {
        if (PySequence_Fast_GET_SIZE(obj) != 3) {
            return 0;
        }
        for (int k = 0; k < 3; k++) {
            PyObject *item = PySequence_Fast_GET_ITEM(obj, k);
            if (!PyFloat_Check(item)) {
                return 0;
            }
            a[k] = PyFloat_AS_DOUBLE(item);
        }
        return 1;
    }
    Py_buffer view;
    int got = float_view(obj, &view, -1, 3);
    if (got == 1) {
        for (int k = 0; k < 3; k++) {
            a[k] = at(&view, k, 0);
        }
        PyBuffer_Release(&view);
    }
    return got;
}

static PyObject *NAME_W, *NAME_X, *NAME_Y, *NAME_Z;

enum { A_STATE, A_ORIENTATION, A_FORCE, A_POSITION, A_VELOCITY, A_RADIUS, A_STANCE, A_ACCEL,
       A_OMEGA, A_DT, A_CONTACT_FORCE, A_ACCEL_VAR, A_ODOMETRY_VAR, A_HEIGHT };

static PyObject *
update(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != N_ARGS) {
        PyErr_Format(PyExc_TypeError, "update() takes %d arguments (%zd given)", N_ARGS, nargs);
        return NULL;
    }
    double c[3];
    for (int k = 0; k < 3; k++) {
        c[k] = PyFloat_AsDouble(args[A_CONTACT_FORCE + k]);
        if (c[k] == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
    }
    const double threshold = c[0], accel_var = c[1], odometry_var = c[2];
    /* the state: ours, so anything else is a programming error */
    Py_buffer sv;
    if (PyObject_GetBuffer(args[A_STATE], &sv, PyBUF_WRITABLE | PyBUF_FORMAT |
                                                  PyBUF_C_CONTIGUOUS) < 0) {
        return NULL;
    }
    if (sv.len != STATE_SIZE * (Py_ssize_t)sizeof(double) || !is_float64(sv.format)) {
        PyErr_Format(PyExc_ValueError, "update: the state must be %d doubles", STATE_SIZE);
        PyBuffer_Release(&sv);
        return NULL;
    }
    double *s = (double *)sv.buf;

    Py_buffer views[4]; /* force, position, velocity, radius */
    Py_buffer omega_view;
    int n_views = 0, have_omega = 0, got = 0;
    PyObject *result = NULL;
    int on[MAX_FEET];
    double a[3];
    /* everything read and checked before the state changes */
    if (!PyFloat_CheckExact(args[A_DT])) {
        goto unsupported;
    }
    const double dt = PyFloat_AS_DOUBLE(args[A_DT]);
    double qw, qx, qy, qz;
    PyObject *q = args[A_ORIENTATION];
    if ((got = float_attr(q, NAME_W, &qw)) != 1 || (got = float_attr(q, NAME_X, &qx)) != 1 ||
        (got = float_attr(q, NAME_Y, &qy)) != 1 || (got = float_attr(q, NAME_Z, &qz)) != 1) {
        goto checked;
    }
    PyObject *stance = args[A_STANCE];
    Py_ssize_t n = PyObject_Length(stance);
    if (n < 0) {
        if (!clear_if_unsupported()) {
            goto done;
        }
        goto unsupported;
    }
    if (n > MAX_FEET) {
        goto unsupported;
    }
    for (; n_views < 4; n_views++) {
        /* force, position, velocity: (n, 3); radius: (n,) */
        got = n_views < 3 ? float_view(args[A_FORCE + n_views], &views[n_views], n, 3)
                          : float_view(args[A_RADIUS], &views[n_views], -1, n);
        if (got != 1) {
            goto checked;
        }
    }
    if ((got = float_view(args[A_OMEGA], &omega_view, -1, 3)) != 1) {
        goto checked;
    }
    have_omega = 1;
    if ((got = acceleration3(args[A_ACCEL], a)) != 1 || (got = stance_flags(stance, n, on)) != 1) {
        goto checked;
    }
    const Py_buffer *force = &views[0], *position = &views[1], *velocity = &views[2];
    const Py_buffer *radius = &views[3];

    /* rotation_rows(w, x, y, z): the rows of R, body -> world */
    double xx = qx * qx, yy = qy * qy, zz = qz * qz;
    double xy = qx * qy, xz = qx * qz, yz = qy * qz;
    double wx = qw * qx, wy = qw * qy, wz = qw * qz;
    const double r00 = 1.0 - 2.0 * (yy + zz), r01 = 2.0 * (xy - wz), r02 = 2.0 * (xz + wy);
    const double r10 = 2.0 * (xy + wz), r11 = 1.0 - 2.0 * (xx + zz), r12 = 2.0 * (yz - wx);
    const double r20 = 2.0 * (xz - wy), r21 = 2.0 * (yz + wx), r22 = 1.0 - 2.0 * (xx + yy);
    const double ux = r20, uy = r21, uz = r22;

    /* one pass over the feet: contact, and sums over the contact feet */
    int down[MAX_FEET];
    Py_ssize_t k = 0;
    double px = 0.0, py = 0.0, pz = 0.0, rx = 0.0, ry = 0.0, rz = 0.0, height = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double fx = at(force, i, 0), fy = at(force, i, 1), fz = at(force, i, 2);
        /* a NaN force fails the comparison: the schedule's word stands */
        down[i] = on[i] && !(fx * ux + fy * uy + fz * uz <= threshold);
        if (down[i]) {
            double x = at(position, i, 0), y = at(position, i, 1), z = at(position, i, 2);
            k++;
            px += x;
            py += y;
            pz += z;
            height += at(radius, i, 0) - (x * ux + y * uy + z * uz);
            rx += at(velocity, i, 0);
            ry += at(velocity, i, 1);
            rz += at(velocity, i, 2);
        }
    }
    /* predict with the IMU */
    if (isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2])) {
        double ax = a[0], ay = a[1], az = a[2];
        s[S_V + 0] += (r00 * ax + r01 * ay + r02 * az) * dt;
        s[S_V + 1] += (r10 * ax + r11 * ay + r12 * az) * dt;
        s[S_V + 2] += (r20 * ax + r21 * ay + r22 * az - GRAVITY) * dt;
    }
    double q_var = accel_var * dt;
    s[S_VAR + 0] += q_var;
    s[S_VAR + 1] += q_var;
    s[S_VAR + 2] += q_var;
    /* correct with leg odometry over the contact feet */
    if (k) {
        double kd = (double)k;
        px = px / kd;
        py = py / kd;
        pz = pz / kd;
        rx = rx / kd;
        ry = ry / kd;
        rz = rz / kd;
        double wx_ = at(&omega_view, 0, 0), wy_ = at(&omega_view, 1, 0);
        double wz_ = at(&omega_view, 2, 0);
        /* v = -mean(p_rel' + w x p) = -(mean p_rel' + w x mean p) */
        double bx = -(rx + wy_ * pz - wz_ * py);
        double by = -(ry + wz_ * px - wx_ * pz);
        double bz = -(rz + wx_ * py - wy_ * px);
        if (isfinite(bx) && isfinite(by) && isfinite(bz)) {
            double meas[3] = {r00 * bx + r01 * by + r02 * bz, r10 * bx + r11 * by + r12 * bz,
                              r20 * bx + r21 * by + r22 * bz};
            for (int axis = 0; axis < 3; axis++) {
                double var = s[S_VAR + axis];
                double den = var + odometry_var;
                if (den == 0.0) {
                    PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero");
                    goto done;
                }
                double gain = var / den;
                s[S_V + axis] += gain * (meas[axis] - s[S_V + axis]);
                s[S_VAR + axis] = var * (1.0 - gain);
            }
        }
        height /= kd;
        if (isfinite(height)) {
            s[S_HEIGHT] = height;
        }
    }
    double vx = s[S_V + 0], vy = s[S_V + 1], vz = s[S_V + 2];
    s[S_X] += vx * dt;
    s[S_Y] += vy * dt;
    PyObject *h = isfinite(s[S_HEIGHT]) ? PyFloat_FromDouble(s[S_HEIGHT])
                                        : Py_NewRef(args[A_HEIGHT]);
    PyObject *contact = PyList_New(n);
    if (h == NULL || contact == NULL) {
        Py_XDECREF(h);
        Py_XDECREF(contact);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyList_SET_ITEM(contact, i, Py_NewRef(down[i] ? Py_True : Py_False));
    }
    /* R^T v: the body frame's velocity */
    result = Py_BuildValue("(N(ddO)O(ddd)(ddd))", contact, s[S_X], s[S_Y], h, h,
                           r00 * vx + r10 * vy + r20 * vz, r01 * vx + r11 * vy + r21 * vz,
                           r02 * vx + r12 * vy + r22 * vz, vx, vy, vz);
    Py_DECREF(h);
    goto done;
checked:
    if (got < 0) {
        goto done;
    }
unsupported:
    result = Py_NewRef(Py_None);
done:
    for (int i = 0; i < n_views; i++) {
        PyBuffer_Release(&views[i]);
    }
    if (have_omega) {
        PyBuffer_Release(&omega_view);
    }
    PyBuffer_Release(&sv);
    return result;
}

static PyMethodDef module_methods[] = {
    {"update", (PyCFunction)(void (*)(void))update, METH_FASTCALL,
     "update(state, orientation, foot_force, foot_position, foot_velocity, foot_radius, stance, "
     "acceleration, angular_velocity, dt, contact_force, accel_variance, odometry_variance, "
     "height) -> (contact, position, height, body_velocity, world_velocity) or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_estimate_accel",
    "Compiled core of the hb50 walking estimator's step (see _estimate_accel.c).", -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__estimate_accel(void)
{
    if ((NAME_W = PyUnicode_InternFromString("w")) == NULL ||
        (NAME_X = PyUnicode_InternFromString("x")) == NULL ||
        (NAME_Y = PyUnicode_InternFromString("y")) == NULL ||
        (NAME_Z = PyUnicode_InternFromString("z")) == NULL) {
        return NULL;
    }
    return PyModule_Create(&module);
}
