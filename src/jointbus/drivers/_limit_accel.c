/*
 * _limit_accel: the drive's limit guard for N joints in one pass (optional compiled core of
 * jointbus.drivers.limit_guard).
 *
 * Where it sits: jointbus.drivers. limit_guard.py loads this module when it was built (setup.py
 * marks it optional) and otherwise runs the same law with numpy; tests/drivers/test_limit_guard.py
 * holds both to each other on random states and commands.
 *
 * Why it exists: the simulator and the CAN driver run the guard every control cycle (500 or
 * 1000 Hz). In numpy it is ~25 calls of about a microsecond each for 12 numbers (25-90 us per
 * cycle on our 2-vCPU VM, depending on its load): a tenth of the bridge's budget. This loop does
 * the same arithmetic, joint by joint, in about a microsecond.
 *
 * apply(guarded, position, velocity, p_ref, v_ref, torque, kp, kd, load,
 *       lower, upper, vmax, decel2, gain, return_kp, period, limited, speed_limited) -> int
 *   guarded, limited, speed_limited: C-contiguous bool (uint8) buffers of n values; limited and
 *   speed_limited are written.
 *   position ... kd, lower ... return_kp: C-contiguous float64 buffers of n values; p_ref, v_ref,
 *   torque, kp, kd are changed in place for every joint the envelope law takes over; load is such
 *   a buffer or None (no load estimate: 0). period: the control cycle, s. limited marks, and the
 *   return value counts, the joints whose *command* pushed towards an end (held back);
 *   speed_limited marks those of them held at their speed limit (the envelope's speed was vmax
 *   itself), the others being held at an end of their range.
 *   The law is limit_guard.py's (its module docstring), value for value.
 *
 * bounds(lower, upper, exact_lower, exact_upper, values) -> int
 *   Five C-contiguous float64 buffers of one length (any shape: a rows x joints block; the
 *   values last, so a partial of the four bounds is the check's one call). -1 when a
 *   value is not within [lower, upper] (NaN and +-inf included), else 1 when one is not strictly
 *   inside (exact_lower, exact_upper) (it is to be clamped to its limit), else 0. The command
 *   check's test of each value of an impedance command (jointbus.nodes.safety.command_check,
 *   whose plain-Python twin it equals): 72 values a command, 25-35 us a cycle in Python on the
 *   bridge's loop, under a microsecond here. Only the verdict: which joint and field is wrong the
 *   check finds again with numpy, on the rare command that fails.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

enum { N_DOUBLES = 14 };

static int
get_buffer(PyObject *obj, Py_buffer *view, char format, Py_ssize_t itemsize, const char *what,
           int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        return -1;
    }
    const char *f = view->format != NULL ? view->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') {
        f++;
    }
    if (view->ndim > 1 || view->itemsize != itemsize || f[0] != format || f[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-D C-contiguous %s buffer", what,
                     format == 'd' ? "float64" : "bool");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *
limit_apply(PyObject *self, PyObject *args)
{
    PyObject *guarded_obj, *limited_obj, *speed_obj, *load_obj;
    PyObject *objs[N_DOUBLES];
    double period;
    static const char *names[N_DOUBLES] = {
        "position", "velocity", "p_ref", "v_ref", "torque", "kp", "kd",
        "lower", "upper", "vmax", "decel2", "gain", "return_kp", "load"};
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOdOO", &guarded_obj, &objs[0], &objs[1],
                          &objs[2], &objs[3], &objs[4], &objs[5], &objs[6], &load_obj,
                          &objs[7], &objs[8], &objs[9], &objs[10], &objs[11], &objs[12],
                          &period, &limited_obj, &speed_obj)) {
        return NULL;
    }
    objs[13] = load_obj;
    int with_load = load_obj != Py_None;
    Py_buffer views[N_DOUBLES];
    Py_buffer guarded, limited, speed;
    int got = 0;
    long held = -1;
    if (get_buffer(guarded_obj, &guarded, '?', 1, "guarded", 0) < 0) {
        return NULL;
    }
    if (get_buffer(limited_obj, &limited, '?', 1, "limited", 1) < 0) {
        PyBuffer_Release(&guarded);
        return NULL;
    }
    if (get_buffer(speed_obj, &speed, '?', 1, "speed_limited", 1) < 0) {
        PyBuffer_Release(&guarded);
        PyBuffer_Release(&limited);
        return NULL;
    }
    Py_ssize_t n = guarded.len;
    for (; got < N_DOUBLES; got++) {
        if (got == 13 && !with_load) {
            break;
        }
        /* p_ref .. kd are written */
        int writable = got >= 2 && got <= 6;
        if (get_buffer(objs[got], &views[got], 'd', 8, names[got], writable) < 0) {
            goto done;
        }
        if (views[got].len != n * 8) {
            PyErr_Format(PyExc_ValueError, "%s: expected %zd values, got %zd", names[got], n,
                         views[got].len / 8);
            PyBuffer_Release(&views[got]);
            goto done;
        }
    }
    if (limited.len != n || speed.len != n) {
        PyErr_Format(PyExc_ValueError, "limited, speed_limited: expected %zd values each", n);
        goto done;
    }
    {
        const unsigned char *g = guarded.buf;
        unsigned char *lim = limited.buf;
        unsigned char *at_speed = speed.buf;
        const double *p = views[0].buf, *v = views[1].buf;
        double *p_ref = views[2].buf, *v_ref = views[3].buf, *tau = views[4].buf;
        double *kp = views[5].buf, *kd = views[6].buf;
        const double *lower = views[7].buf, *upper = views[8].buf, *vmax = views[9].buf;
        const double *decel2 = views[10].buf, *gain = views[11].buf, *ret = views[12].buf;
        const double *load = with_load ? views[13].buf : NULL;
        held = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            lim[i] = 0;
            at_speed[i] = 0;
            if (!g[i] || isnan(p[i]) || isnan(v[i])) {
                continue; /* not guarded, or not measured: the numpy law's NaN comparisons */
            }
            double ahead = p[i] + v[i] * period;
            double room_up = fmax(upper[i] - ahead, 0.0);
            double room_down = fmax(ahead - lower[i], 0.0);
            double v_up = fmin(sqrt(decel2[i] * room_up), vmax[i]);
            double v_down = -fmin(sqrt(decel2[i] * room_down), vmax[i]);
            double reach = vmax[i] * (4.0 * period);
            double over_up = fmin(fmax(upper[i] - p[i], -reach), 0.0);
            double over_down = fmin(fmax(lower[i] - p[i], 0.0), reach);
            double extra = load != NULL ? load[i] : 0.0;
            double tau_up = gain[i] * (v_up - v[i]) + ret[i] * over_up + extra;
            double tau_down = gain[i] * (v_down - v[i]) + ret[i] * over_down + extra;
            double law = tau[i] + kp[i] * (p_ref[i] - p[i]) + kd[i] * (v_ref[i] - v[i]);
            int up = law > tau_up;
            int down = law < tau_down;
            if (!(up || down)) {
                continue;
            }
            /* Held back: the command itself asks to go past the end (its law, at rest at the
               end, pushes on). A load alone carrying the joint there is assisted, not flagged. */
            double end_up = isfinite(upper[i]) ? upper[i] : p[i];
            double end_down = isfinite(lower[i]) ? lower[i] : p[i];
            double at_up = tau[i] + kp[i] * (p_ref[i] - end_up) + kd[i] * v_ref[i];
            double at_down = tau[i] + kp[i] * (p_ref[i] - end_down) + kd[i] * v_ref[i];
            if ((up && at_up > 0.0) || (down && at_down < 0.0)) {
                lim[i] = 1;
                held++;
                /* which bound held it: the speed limit where the envelope's speed was vmax
                   itself (down wins, as for v_ref below); else the end of the range */
                at_speed[i] = (down ? -v_down : v_up) >= vmax[i];
            }
            /* the numpy law writes the up speed first, then the down one: down wins when both
               hold. Inside the range, never towards the end faster than the command's own speed
               (where its law asks the load torque; without damping, unbounded the way it pushes,
               none if it pushes neither way); beyond an end, the envelope's speed in full. */
            double to = down ? v_down : v_up;
            if (!(over_up < 0.0 || over_down > 0.0)) {
                double rest = tau[i] + kp[i] * (p_ref[i] - p[i]) - extra;
                double own = kd[i] > 0.0 ? v_ref[i] + rest / kd[i]
                             : rest > 0.0 ? INFINITY : rest < 0.0 ? -INFINITY : 0.0;
                to = down ? fmax(v_down, fmin(own, 0.0)) : fmin(v_up, fmax(own, 0.0));
            }
            kp[i] = 0.0;
            kd[i] = gain[i];
            tau[i] = extra;
            v_ref[i] = to;
            if (up && over_up < 0.0) {
                kp[i] = ret[i];
                p_ref[i] = p[i] + over_up;
            }
            if (down && over_down > 0.0) {
                kp[i] = ret[i];
                p_ref[i] = p[i] + over_down;
            }
        }
    }
done:
    for (int k = 0; k < got; k++) {
        PyBuffer_Release(&views[k]);
    }
    PyBuffer_Release(&guarded);
    PyBuffer_Release(&limited);
    PyBuffer_Release(&speed);
    if (held < 0) {
        return NULL;
    }
    return PyLong_FromLong(held);
}

/* Any-shape C-contiguous float64 buffer; its length in values, or -1 with an exception set. */
static Py_ssize_t
get_block(PyObject *obj, Py_buffer *view, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        return -1;
    }
    const char *f = view->format != NULL ? view->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') {
        f++;
    }
    if (view->itemsize != sizeof(double) || f[0] != 'd' || f[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous float64 buffer", what);
        PyBuffer_Release(view);
        return -1;
    }
    return view->len / view->itemsize;
}

static PyObject *
limit_bounds(PyObject *self, PyObject *args)
{
    static const char *names[5] = {"lower", "upper", "exact_lower", "exact_upper", "values"};
    PyObject *objs[5];
    Py_buffer views[5];
    const double *d[5];
    Py_ssize_t n = 0;
    int got = 0;
    long verdict = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOO:bounds", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4])) {
        return NULL;
    }
    for (; got < 5; got++) {
        Py_ssize_t len = get_block(objs[got], &views[got], names[got]);
        if (len < 0) {
            goto fail;
        }
        if (got == 0) {
            n = len;
        } else if (len != n) {
            PyErr_Format(PyExc_ValueError, "bounds: %s has %zd values, lower has %zd",
                         names[got], len, n);
            got++;
            goto fail;
        }
        d[got] = (const double *)views[got].buf;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double v = d[4][i];
        if (!(d[0][i] <= v && v <= d[1][i])) {
            verdict = -1;
            break;
        }
        if (!(d[2][i] < v && v < d[3][i])) {
            verdict = 1;
        }
    }
    for (int k = 0; k < 5; k++) {
        PyBuffer_Release(&views[k]);
    }
    return PyLong_FromLong(verdict);
fail:
    for (int k = 0; k < got; k++) {
        PyBuffer_Release(&views[k]);
    }
    return NULL;
}

static PyMethodDef methods[] = {
    {"bounds", limit_bounds, METH_VARARGS,
     "bounds(lower, upper, exact_lower, exact_upper, values) -> int: -1 a value out of "
     "[lower, upper], 1 one not strictly inside the exact limits, else 0 (command_check.py)"},
    {"apply", limit_apply, METH_VARARGS,
     "apply(guarded, position, velocity, p_ref, v_ref, torque, kp, kd, load, lower, upper, vmax, "
     "decel2, gain, return_kp, period, limited, speed_limited) -> int: the limit guard (see "
     "limit_guard.py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_limit_accel",
    "The limit guard's compiled core (jointbus.drivers.limit_guard).", -1, methods,
};

PyMODINIT_FUNC
PyInit__limit_accel(void)
{
    return PyModule_Create(&module);
}
