/*
 * _command_accel: JointCommand's five float fields straight from a controller's arrays
 * (optional compiled core of jointbus.robots.hb50.messages.command_fields).
 *
 * Where it sits: jointbus.robots.hb50.messages. command_fields.py loads this module when it was
 * built (setup.py marks it optional) and otherwise computes the same result in Python; the tests
 * (tests/robots/hb50/messages/test_command_fields.py) hold both to the same answers, and
 * test_joint_command.py holds JointCommand.from_joint_arrays to the constructor.
 *
 * Why it exists: the control node builds one JointCommand per frame (500 or 1000 Hz) from five
 * float64 arrays of 12 numbers. In Python that is a concatenate, a tolist, an array('f') rounding
 * pass, a tolist back, a finiteness sum and five slices into tuples: 6.2-6.4 us on this
 * project's VM against 1.5 us here (2026-12-07, 12 joints; 31 us a frame inside the running
 * control process). This does it in one pass.
 *
 * command_fields(kp, kd, t_pos, t_vel, t_trq)
 *   each: a 1-D C-contiguous float64 buffer; all of one length n.
 *   Returns (kp, kd, t_pos, t_vel, t_trq): five tuples of n floats, each value rounded to float32
 *   as JointCommand's constructor rounds it (round to nearest even).
 *   Returns None when a value is NaN, +-inf or rounds to infinity in float32, or a gain (kp, kd)
 *   is below zero: the caller then builds the message through its constructor, which names the
 *   joint, the field and the value.
 *   Raises TypeError for buffers of another format or dimension, ValueError for other lengths.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>

/* The midpoint between FLT_MAX and 2^128: doubles at or above it round to infinity in float32
 * (FLT_MAX's mantissa is odd, so the tie goes up). Below it, (float)x is defined and finite. */
static const double F32_OVERFLOW = 0x1.ffffffp+127;

#define FIELDS 5
#define GAINS 2 /* kp and kd come first; they may not be negative */

static const char *const NAMES[FIELDS] = {"kp", "kd", "t_pos", "t_vel", "t_trq"};

static int
get_doubles(PyObject *obj, Py_buffer *view, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        return -1;
    }
    const char *f = view->format != NULL ? view->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') {
        f++;
    }
    if (view->ndim > 1 || view->itemsize != (Py_ssize_t)sizeof(double) || f[0] != 'd' ||
        f[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-D C-contiguous float64 buffer", what);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The float32 rounding of x as a double; 0 when x is NaN or rounds to infinity (refused). */
static int
rounded(double x, double *out)
{
    if (isnan(x) || fabs(x) >= F32_OVERFLOW) {
        return 0;
    }
    *out = fabs(x) > FLT_MAX ? copysign((double)FLT_MAX, x) : (double)(float)x;
    return 1;
}

static PyObject *
command_fields(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *objs[FIELDS];
    if (!PyArg_ParseTuple(args, "OOOOO:command_fields", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4])) {
        return NULL;
    }
    Py_buffer views[FIELDS];
    int got = 0;
    PyObject *result = NULL;
    PyObject *fields[FIELDS] = {NULL, NULL, NULL, NULL, NULL};
    for (; got < FIELDS; got++) {
        if (get_doubles(objs[got], &views[got], NAMES[got]) < 0) {
            goto done;
        }
    }
    Py_ssize_t n = views[0].len / (Py_ssize_t)sizeof(double);
    for (int k = 1; k < FIELDS; k++) {
        if (views[k].len / (Py_ssize_t)sizeof(double) != n) {
            PyErr_Format(PyExc_ValueError, "%s holds %zd values; expected %zd (as kp)", NAMES[k],
                         views[k].len / (Py_ssize_t)sizeof(double), n);
            goto done;
        }
    }
    /* Every value is checked before any object is made: a refused command costs no garbage. */
    for (int k = 0; k < FIELDS; k++) {
        const double *v = (const double *)views[k].buf;
        for (Py_ssize_t i = 0; i < n; i++) {
            double r;
            if (!rounded(v[i], &r) || (k < GAINS && r < 0.0)) {
                result = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
    for (int k = 0; k < FIELDS; k++) {
        const double *v = (const double *)views[k].buf;
        fields[k] = PyTuple_New(n);
        if (fields[k] == NULL) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            double r = 0.0;
            (void)rounded(v[i], &r); /* checked above */
            PyObject *item = PyFloat_FromDouble(r);
            if (item == NULL) {
                goto done;
            }
            PyTuple_SET_ITEM(fields[k], i, item);
        }
    }
    result = PyTuple_Pack(FIELDS, fields[0], fields[1], fields[2], fields[3], fields[4]);
done:
    for (int k = 0; k < FIELDS; k++) {
        Py_XDECREF(fields[k]);
    }
    for (int k = 0; k < got; k++) {
        PyBuffer_Release(&views[k]);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"command_fields", command_fields, METH_VARARGS,
     "JointCommand's float fields from a controller's arrays (see command_fields.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_command_accel",
    "Compiled core of jointbus.robots.hb50.messages.command_fields (optional).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__command_accel(void)
{
    return PyModule_Create(&module);
}
