/*
 * _robot_state_accel: hb50 RobotState built from an estimate's arrays in one pass (optional
 * compiled core of jointbus.robots.hb50.messages.robot_state.RobotState.from_estimate_arrays).
 *
 * Where it sits: jointbus.robots.hb50.messages. robot_state.py loads this module when it was
 * built (setup.py marks it optional; JOINTBUS_NO_ACCEL=1 turns it off), binds it to the message
 * classes, and otherwise builds the same message in Python
 * (RobotState.from_estimate_arrays_python); tests/robots/hb50/messages/test_robot_state.py holds
 * both to the constructors' message, byte for byte.
 *
 * Why it exists: the control node builds one RobotState per frame (500 or 1000 Hz): 25 records
 * (4 LegState, 14 Vector3, a Point, a Pose, 2 Twist, the RobotState), ~70 fields and 51 floats.
 * In Python, even without the constructors' checks, that is ~12 us warm and 30-40 us inside the
 * running stack (cold caches between frames); here it is one call.
 *
 * bind(Vector3, Point, Pose, Twist, LegState, RobotState)
 *   The classes to build (their slot descriptors are looked up once).
 * build(header, leg_names, contact, foot_position, foot_velocity, foot_force, position,
 *       orientation, body_linear, body_angular, world_linear, world_angular, mode, type, gait)
 *   The message, every slot set directly (no constructor runs): the caller has checked what the
 *   constructors check (a Header, valid leg names, a wire Quaternion, enum members); the arrays
 *   are read through the buffer protocol and must be C-contiguous and shaped exactly: contact
 *   (n,) bool, the foot arrays (n, 3) float64, the others (3,) float64, n = len(leg_names).
 *   ValueError / TypeError for anything else, before anything is built (the caller then builds
 *   the message in Python, where the constructors name what is wrong).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

enum { V_X, V_Y, V_Z, N_V };
enum { POSE_POSITION, POSE_ORIENTATION, N_POSE };
enum { TW_LINEAR, TW_ANGULAR, N_TW };
enum { LEG_NAME, LEG_CONTACT, LEG_POS, LEG_VEL, LEG_FORCE, N_LEG };
enum { RS_HEADER, RS_LEG, RS_POSE, RS_BODY, RS_WORLD, RS_MODE, RS_TYPE, RS_GAIT, N_RS };

static const char *V_NAMES[N_V] = {"x", "y", "z"};
static const char *POSE_NAMES[N_POSE] = {"position", "orientation"};
static const char *TW_NAMES[N_TW] = {"linear", "angular"};
static const char *LEG_NAMES[N_LEG] = {"leg_name", "contact", "foot_pos_body", "foot_vel",
                                       "foot_force_est"};
static const char *RS_NAMES[N_RS] = {"header", "leg", "pose", "body_vel", "world_vel",
                                     "motion_mode", "motion_type", "motion_gait"};

typedef struct {
    PyTypeObject *cls;
    int n;
    PyObject *slot[8]; /* the member descriptors, in the enum order */
} Record;

static Record vector3, point, pose, twist, leg_state, robot_state;
static int bound = 0;

static int
bind_record(Record *record, PyObject *cls, const char **names, int n)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "bind: expected the message classes");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *descr = PyObject_GetAttrString(cls, names[i]);
        if (descr == NULL) {
            return -1;
        }
        if (Py_TYPE(descr)->tp_descr_set == NULL) {
            PyErr_Format(PyExc_TypeError, "bind: %R.%s is not a slot", cls, names[i]);
            Py_DECREF(descr);
            return -1;
        }
        Py_XSETREF(record->slot[i], descr);
    }
    Py_INCREF(cls);
    Py_XSETREF(record->cls, (PyTypeObject *)cls);
    record->n = n;
    return 0;
}

static PyObject *
bind(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *c[6];
    if (!PyArg_ParseTuple(args, "OOOOOO:bind", &c[0], &c[1], &c[2], &c[3], &c[4], &c[5])) {
        return NULL;
    }
    if (bind_record(&vector3, c[0], V_NAMES, N_V) < 0 ||
        bind_record(&point, c[1], V_NAMES, N_V) < 0 ||
        bind_record(&pose, c[2], POSE_NAMES, N_POSE) < 0 ||
        bind_record(&twist, c[3], TW_NAMES, N_TW) < 0 ||
        bind_record(&leg_state, c[4], LEG_NAMES, N_LEG) < 0 ||
        bind_record(&robot_state, c[5], RS_NAMES, N_RS) < 0) {
        bound = 0;
        return NULL;
    }
    bound = 1;
    Py_RETURN_NONE;
}

/* A new record with its slots set to values (stolen references, NULL-checked: NULL in, NULL
 * out, with the others released). */
static PyObject *
make(const Record *record, PyObject **values)
{
    int n = record->n;
    PyObject *obj = NULL;
    for (int i = 0; i < n; i++) {
        if (values[i] == NULL) {
            goto fail;
        }
    }
    obj = record->cls->tp_alloc(record->cls, 0);
    if (obj == NULL) {
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        PyObject *d = record->slot[i];
        if (Py_TYPE(d)->tp_descr_set(d, obj, values[i]) < 0) {
            Py_CLEAR(obj);
            goto fail;
        }
    }
fail:
    for (int i = 0; i < n; i++) {
        Py_XDECREF(values[i]);
    }
    return obj;
}

static PyObject *
vec(const Record *record, const double *v)
{
    PyObject *values[N_V] = {PyFloat_FromDouble(v[0]), PyFloat_FromDouble(v[1]),
                             PyFloat_FromDouble(v[2])};
    return make(record, values);
}

/* A C-contiguous buffer of `rows` (or, with rows < 0, a 1-D buffer of `cols`) items of
 * `format` ('d' float64, '?' bool), shaped exactly so; 0, or -1 with ValueError / TypeError. */
static int
get_array(PyObject *obj, Py_buffer *view, Py_ssize_t rows, Py_ssize_t cols, char format,
          const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        return -1;
    }
    const char *f = view->format != NULL ? view->format : "B";
    if (format == 'd' && (f[0] == '<' || f[0] == '=' || f[0] == '@')) {
        f++;
    }
    Py_ssize_t itemsize = format == 'd' ? (Py_ssize_t)sizeof(double) : 1;
    int shaped = rows < 0 ? view->ndim == 1 && view->shape[0] == cols
                          : view->ndim == 2 && view->shape[0] == rows && view->shape[1] == cols;
    if (view->itemsize != itemsize || f[0] != format || f[1] != '\0' || !shaped) {
        if (rows < 0) {
            PyErr_Format(PyExc_ValueError, "%s: expected a C-contiguous (%zd,) %s array", what,
                         cols, format == 'd' ? "float64" : "bool");
        }
        else {
            PyErr_Format(PyExc_ValueError, "%s: expected a C-contiguous (%zd, %zd) %s array",
                         what, rows, cols, format == 'd' ? "float64" : "bool");
        }
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

enum { B_CONTACT, B_POS, B_VEL, B_FORCE, B_POSITION, B_BODY_LIN, B_BODY_ANG, B_WORLD_LIN,
       B_WORLD_ANG, N_BUF };

static PyObject *
build(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *header, *names, *orientation, *mode, *type, *gait;
    PyObject *arrays[N_BUF];
    if (!PyArg_ParseTuple(args, "OO!OOOOOOOOOOOOO:build", &header, &PyTuple_Type, &names,
                          &arrays[B_CONTACT], &arrays[B_POS], &arrays[B_VEL], &arrays[B_FORCE],
                          &arrays[B_POSITION], &orientation, &arrays[B_BODY_LIN],
                          &arrays[B_BODY_ANG], &arrays[B_WORLD_LIN], &arrays[B_WORLD_ANG],
                          &mode, &type, &gait)) {
        return NULL;
    }
    if (!bound) {
        PyErr_SetString(PyExc_RuntimeError, "build: bind() the message classes first");
        return NULL;
    }
    static const char *what[N_BUF] = {"contact", "foot_position", "foot_velocity",
                                      "foot_force", "position", "body_linear_velocity",
                                      "body_angular_velocity", "world_linear_velocity",
                                      "world_angular_velocity"};
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    Py_buffer views[N_BUF];
    int got = 0;
    PyObject *result = NULL, *legs = NULL;
    for (; got < N_BUF; got++) {
        int ok = got == B_CONTACT ? get_array(arrays[got], &views[got], -1, n, '?', what[got])
                 : got <= B_FORCE ? get_array(arrays[got], &views[got], n, 3, 'd', what[got])
                                  : get_array(arrays[got], &views[got], -1, 3, 'd', what[got]);
        if (ok < 0) {
            goto done;
        }
    }
    const char *contact = (const char *)views[B_CONTACT].buf;
    const double *p = (const double *)views[B_POS].buf;
    const double *v = (const double *)views[B_VEL].buf;
    const double *f = (const double *)views[B_FORCE].buf;
    legs = PyTuple_New(n);
    if (legs == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        Py_INCREF(name);
        PyObject *values[N_LEG] = {name, PyBool_FromLong(contact[i]), vec(&vector3, p + 3 * i),
                                   vec(&vector3, v + 3 * i), vec(&vector3, f + 3 * i)};
        PyObject *leg = make(&leg_state, values);
        if (leg == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(legs, i, leg);
    }
    Py_INCREF(orientation);
    PyObject *pose_values[N_POSE] = {vec(&point, (const double *)views[B_POSITION].buf),
                                     orientation};
    PyObject *body_values[N_TW] = {vec(&vector3, (const double *)views[B_BODY_LIN].buf),
                                   vec(&vector3, (const double *)views[B_BODY_ANG].buf)};
    PyObject *world_values[N_TW] = {vec(&vector3, (const double *)views[B_WORLD_LIN].buf),
                                    vec(&vector3, (const double *)views[B_WORLD_ANG].buf)};
    Py_INCREF(header);
    Py_INCREF(mode);
    Py_INCREF(type);
    Py_INCREF(gait);
    PyObject *state_values[N_RS] = {header, legs, make(&pose, pose_values),
                                    make(&twist, body_values), make(&twist, world_values),
                                    mode, type, gait};
    legs = NULL; /* given to make() */
    result = make(&robot_state, state_values);
done:
    Py_XDECREF(legs);
    for (int k = 0; k < got; k++) {
        PyBuffer_Release(&views[k]);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(Vector3, Point, Pose, Twist, LegState, RobotState): the classes to build"},
    {"build", build, METH_VARARGS, "build(...) -> RobotState (see the module docstring)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_robot_state_accel",
    "Compiled core of RobotState.from_estimate_arrays (see _robot_state_accel.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__robot_state_accel(void)
{
    return PyModule_Create(&module);
}
