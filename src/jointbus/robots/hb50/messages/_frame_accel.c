/*
 * _frame_accel: BridgeData's per-joint fields straight from a driver's joint-space arrays
 * (optional compiled core of jointbus.robots.hb50.messages.frame_fields).
 *
 * Where it sits: jointbus.robots.hb50.messages. frame_fields.py loads this module when it was
 * built (setup.py marks it optional) and otherwise computes the same result with numpy; the tests
 * (tests/robots/hb50/messages/test_frame_fields.py) hold both to the message constructor's rules.
 *
 * Why it exists: the bridge builds one BridgeData per cycle (500 or 1000 Hz) from the float64
 * arrays read_joints() fills. In Python that is ~10 numpy calls (NaN / stall flags, temperature
 * NaN -> 0, rint, clip, uint8) and, per float32 field, tolist + array('f') rounding + a finiteness
 * scan -- each call a microsecond of fixed cost for 12 numbers. This does it in one pass.
 *
 * frame_fields(position, velocity, effort, temperature, state, stalled_mask, comm_flag,
 *              motion_flag)   (the flags: ActuatorState.STALLED, BridgeData's JointStatusFlag bits)
 *   position, velocity, effort, temperature: C-contiguous float64 buffers of n values;
 *   state: C-contiguous uint8 buffer of n values (ActuatorState bits).
 *   Returns (position, velocity, effort, temperature, status):
 *     three tuples of n floats, each value rounded to float32 as BridgeData's constructor rounds
 *     it (round to nearest even; NaN kept);
 *     temperature: bytes, one per joint: NaN -> 0, else rounded half to even and clipped to 0..255;
 *     status: tuple of n ints: comm_flag where the position is NaN, | motion_flag where
 *     state & stalled_mask.
 *   Returns None when a position, velocity or effort is +-inf or rounds to infinity in float32:
 *   the caller then builds the message through its constructor, which names the culprit.
 *   Raises TypeError / ValueError for buffers of another format, dimension or length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>

/* The midpoint between FLT_MAX and 2^128: doubles at or above it round to infinity in float32
 * (FLT_MAX's mantissa is odd, so the tie goes up). Below it, (float)x is defined and finite. */
static const double F32_OVERFLOW = 0x1.ffffffp+127;

static int
get_buffer(PyObject *obj, Py_buffer *view, const char *format, Py_ssize_t itemsize,
           const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        return -1;
    }
    const char *f = view->format != NULL ? view->format : "B";
    if (f[0] == '<' || f[0] == '=' || f[0] == '@') {
        f++;
    }
    if (view->ndim > 1 || view->itemsize != itemsize || f[0] != format[0] || f[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-D C-contiguous %s buffer", what,
                     format[0] == 'd' ? "float64" : "uint8");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* One float32-rounded value as a Python float; NULL with no error set when it overflows. */
static PyObject *
rounded(double x, int *overflow)
{
    if (isnan(x)) {
        /* Through float32 like every other value (and like numpy's astype): a NaN's payload
           keeps only the bits float32 has, so both paths give the same bits. */
        return PyFloat_FromDouble((double)(float)x);
    }
    if (fabs(x) >= F32_OVERFLOW) {
        *overflow = 1;
        return NULL;
    }
    double r = fabs(x) > FLT_MAX ? copysign((double)FLT_MAX, x) : (double)(float)x;
    return PyFloat_FromDouble(r);
}

static PyObject *
float32_tuple(const double *values, Py_ssize_t n, int *overflow)
{
    PyObject *out = PyTuple_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = rounded(values[i], overflow);
        if (item == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

static PyObject *
frame_fields(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *objs[5];
    unsigned long stalled_mask, comm_flag, motion_flag;
    if (!PyArg_ParseTuple(args, "OOOOOkkk:frame_fields", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &stalled_mask, &comm_flag, &motion_flag)) {
        return NULL;
    }
    static const char *names[5] = {"position", "velocity", "effort", "temperature", "state"};
    Py_buffer views[5];
    int got = 0;
    PyObject *result = NULL;
    PyObject *fields[5] = {NULL, NULL, NULL, NULL, NULL};
    for (; got < 5; got++) {
        int is_state = got == 4;
        if (get_buffer(objs[got], &views[got], is_state ? "B" : "d",
                       is_state ? 1 : (Py_ssize_t)sizeof(double), names[got]) < 0) {
            goto done;
        }
    }
    Py_ssize_t n = views[0].len / (Py_ssize_t)sizeof(double);
    for (int k = 1; k < 5; k++) {
        if (views[k].len / views[k].itemsize != n) {
            PyErr_Format(PyExc_ValueError, "%s holds %zd values; expected %zd (as position)",
                         names[k], views[k].len / views[k].itemsize, n);
            goto done;
        }
    }
    int overflow = 0;
    for (int k = 0; k < 3; k++) {
        fields[k] = float32_tuple((const double *)views[k].buf, n, &overflow);
        if (fields[k] == NULL) {
            if (overflow) {
                result = Py_NewRef(Py_None);
            }
            goto done;
        }
    }
    fields[3] = PyBytes_FromStringAndSize(NULL, n);
    fields[4] = PyTuple_New(n);
    if (fields[3] == NULL || fields[4] == NULL) {
        goto done;
    }
    const double *t = (const double *)views[3].buf;
    const double *p = (const double *)views[0].buf;
    const unsigned char *s = (const unsigned char *)views[4].buf;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(fields[3]);
    for (Py_ssize_t i = 0; i < n; i++) {
        double c = t[i];
        if (isnan(c) || c <= 0.0) {
            out[i] = 0;
        }
        else if (c >= 255.0) {
            out[i] = 255;
        }
        else {
            out[i] = (unsigned char)nearbyint(c);
        }
        unsigned long flags = 0;
        if (isnan(p[i])) {
            flags |= comm_flag;
        }
        if (s[i] & stalled_mask) {
            flags |= motion_flag;
        }
        PyObject *item = PyLong_FromUnsignedLong(flags);
        if (item == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(fields[4], i, item);
    }
    result = PyTuple_Pack(5, fields[0], fields[1], fields[2], fields[3], fields[4]);
done:
    for (int k = 0; k < 5; k++) {
        Py_XDECREF(fields[k]);
    }
    for (int k = 0; k < got; k++) {
        PyBuffer_Release(&views[k]);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"frame_fields", frame_fields, METH_VARARGS,
     "BridgeData's per-joint fields from joint-space arrays (see frame_fields.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_frame_accel",
    "Compiled core of jointbus.robots.hb50.messages.frame_fields (optional).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__frame_accel(void)
{
    return PyModule_Create(&module);
}
