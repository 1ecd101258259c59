/*
 * _cdr_accel: the compiled core of jointbus's stable-layout CDR fast path (optional).
 *
 * Where it sits: jointbus.codec. jointbus/codec/layout.py compiles, per message class, one layout
 * per set of strings and sequence lengths ("the same joint names cycle after cycle") and hands this
 * module a spec of it; jointbus/codec/accel.py loads the module if it was built. Without it the
 * same layouts run in pure Python (the fallback and the reference these programs are tested
 * against, in tests/codec).
 *
 * Why it exists (measured on the 2-core dev VM, 12-joint BridgeData / JointCommand round trip =
 * decode with every field materialised + encode): rosbags 26 us, msgspec msgpack 2.4 us, the
 * cached-layout codec in Python with message constructors 17-20 us, and in Python with the
 * classes' WIRE_RULES instead of constructors 10-11 us. The issue requires >= 8x rosbags and
 * aims at >= 15x and within 1.5x of msgspec; only a compiled core gets there (mypyc on the Python
 * codec reached 3.5x). With this core: 1.4 us (BridgeData, 19x) and 1.5 us (JointCommand, 18x),
 * about 0.6x msgspec's time. See bench/bench_codec.py for the current numbers.
 *
 * What a Program does (spec built by layout.py, validated here once):
 *   spec = (size, template, spans, root)
 *     size      payload size in bytes (a payload may carry up to 3 trailing padding bytes);
 *     template  the sample message's bytes (size bytes): encode starts from a copy of it;
 *     spans     ((offset, length), ...): constant bytes (encapsulation id, string lengths and
 *               contents, sequence counts); decode compares them with memcmp;
 *     root      an op.
 *   op = (kind, code, offset, count, flags, lo, hi, value, child)
 *     K_CONST   value is returned on decode; on encode the object's value must be of the same
 *               type and equal (strings, name tuples, string-only sub-messages);
 *     K_SCALAR  one primitive (struct code ? b B h H i I q Q f d) at offset;
 *     K_ARRAY   count primitives from offset, as a tuple;
 *     K_BLOB    count bytes from offset, as bytes;
 *     K_NODE    child = (cls, direct, names, ops): a message; direct = the class declares
 *               WIRE_RULES, so it is allocated and its slots set without calling its constructor
 *               (rules checked here); otherwise cls(*values) is called;
 *     K_NODES   child = (op, ...) of K_NODE / K_CONST, count of them: a tuple of messages.
 *   flags (rules, per element): F_FINITE reject NaN/inf, F_NO_INF reject inf, F_GE value >= lo,
 *   F_LE value <= hi (NaN passes bounds), F_ENUM value = (base, table): table[v - base] is the
 *   member, a value outside the table or a None entry is rejected.
 *
 * Results: decode returns the message, or `miss` (the marker given at construction) when the
 * bytes do not have this layout or break a rule -- the generic Python engine then answers with
 * the object or a precise DecodeError. encode returns bytes, or None when the object does not
 * have this layout or holds a value this program does not pack exactly like the generic engine
 * (an int in a float field, a float32 beyond range, ...). Exceptions only for MemoryError or when
 * a constructor of a non-direct class raises (the codec then also asks the generic engine).
 *
 * Safety: every offset in the spec is checked against `size` when the Program is built, and
 * decode runs only on buffers of size..size+3 bytes, so untrusted bytes are never read out of
 * bounds; every value read is a fixed-size primitive, nothing on the wire sizes an allocation.
 * Direct construction only uses slot member descriptors of exactly `cls` (T_OBJECT_EX, no
 * flags), checked when the Program is built; encode reads slots only of objects whose type is
 * exactly `cls`.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <time.h>

enum { K_CONST = 0, K_SCALAR = 1, K_ARRAY = 2, K_BLOB = 3, K_NODE = 4, K_NODES = 5 };
enum { F_FINITE = 1, F_NO_INF = 2, F_GE = 4, F_LE = 8, F_ENUM = 16 };
#define MAX_DEPTH 64
#define MISS_OR_ERROR NULL

typedef struct Node Node;

typedef struct Op {
    int kind;
    char code;           /* struct code of the primitive */
    int esize;           /* bytes per element */
    int flags;
    Py_ssize_t offset;   /* payload offset of the first byte */
    Py_ssize_t count;    /* elements (K_ARRAY, K_BLOB, K_NODES) */
    double lo, hi;       /* bounds of float fields */
    long long ilo, ihi;  /* bounds of integer fields */
    long long base;      /* F_ENUM: value of table[0] */
    PyObject *value;     /* K_CONST: the value; F_ENUM: the member table (tuple) */
    Node *node;          /* K_NODE */
    struct Op *items;    /* K_NODES */
} Op;

struct Node {
    PyTypeObject *cls;
    int direct;
    Py_ssize_t nfields;
    PyObject **names;    /* attribute names */
    Py_ssize_t *slots;   /* member offset in the object, or -1 */
    Op *fields;
};

typedef struct {
    PyObject_HEAD
    Py_ssize_t size;
    PyObject *template;  /* bytes of length size */
    Py_ssize_t nspans;
    Py_ssize_t *spans;   /* offset, length pairs */
    Op root;
    PyObject *miss;
} ProgramObject;

/* ------------------------------------------------------------------------------------------ */
/* spec parsing and freeing                                                                   */
/* ------------------------------------------------------------------------------------------ */
static void free_node(Node *node);

static void
free_op(Op *op)
{
    Py_CLEAR(op->value);
    if (op->node != NULL) {
        free_node(op->node);
        op->node = NULL;
    }
    if (op->items != NULL) {
        for (Py_ssize_t i = 0; i < op->count; i++) {
            free_op(&op->items[i]);
        }
        PyMem_Free(op->items);
        op->items = NULL;
    }
}

static void
free_node(Node *node)
{
    if (node->fields != NULL) {
        for (Py_ssize_t i = 0; i < node->nfields; i++) {
            free_op(&node->fields[i]);
        }
        PyMem_Free(node->fields);
    }
    if (node->names != NULL) {
        for (Py_ssize_t i = 0; i < node->nfields; i++) {
            Py_XDECREF(node->names[i]);
        }
        PyMem_Free(node->names);
    }
    PyMem_Free(node->slots);
    Py_XDECREF(node->cls);
    PyMem_Free(node);
}

static int
element_size(char code)
{
    switch (code) {
    case '?': case 'b': case 'B': return 1;
    case 'h': case 'H': return 2;
    case 'i': case 'I': case 'f': return 4;
    case 'q': case 'Q': case 'd': return 8;
    default: return 0;
    }
}

static int
is_float_code(char code)
{
    return code == 'f' || code == 'd';
}

static int
spec_error(const char *what)
{
    PyErr_Format(PyExc_ValueError, "invalid layout spec: %s", what);
    return -1;
}

/* The offset of a writable object slot of exactly `cls`, or -1 (then attributes are used). */
static Py_ssize_t
member_offset(PyTypeObject *cls, PyObject *name)
{
    PyObject *descr = PyObject_GetAttr((PyObject *)cls, name);
    Py_ssize_t offset = -1;
    if (descr == NULL) {
        PyErr_Clear();
        return -1;
    }
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && member->flags == 0
            && PyType_IsSubtype(cls, PyDescr_TYPE(descr)) && member->offset > 0
            && member->offset + (Py_ssize_t)sizeof(PyObject *) <= cls->tp_basicsize) {
            offset = member->offset;
        }
    }
    Py_DECREF(descr);
    return offset;
}

static int parse_op(PyObject *spec, Op *op, Py_ssize_t size, int depth);

static int
parse_node(PyObject *spec, Node **out, Py_ssize_t size, int depth)
{
    PyObject *cls, *direct, *names, *fields;
    Node *node;
    int all_slots = 1;

    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 4) {
        return spec_error("a node is (cls, direct, names, ops)");
    }
    cls = PyTuple_GET_ITEM(spec, 0);
    direct = PyTuple_GET_ITEM(spec, 1);
    names = PyTuple_GET_ITEM(spec, 2);
    fields = PyTuple_GET_ITEM(spec, 3);
    if (!PyType_Check(cls) || !PyTuple_Check(names) || !PyTuple_Check(fields)
        || PyTuple_GET_SIZE(names) != PyTuple_GET_SIZE(fields)) {
        return spec_error("a node needs a class and one name per op");
    }
    node = PyMem_Calloc(1, sizeof(Node));
    if (node == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    node->nfields = PyTuple_GET_SIZE(fields);
    node->cls = (PyTypeObject *)Py_NewRef(cls);
    node->names = PyMem_Calloc(node->nfields ? node->nfields : 1, sizeof(PyObject *));
    node->slots = PyMem_Calloc(node->nfields ? node->nfields : 1, sizeof(Py_ssize_t));
    node->fields = PyMem_Calloc(node->nfields ? node->nfields : 1, sizeof(Op));
    if (node->names == NULL || node->slots == NULL || node->fields == NULL) {
        /* nfields must not be used by free_node on partially filled arrays: they are zeroed */
        free_node(node);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < node->nfields; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        if (!PyUnicode_Check(name)) {
            free_node(node);
            return spec_error("field names must be str");
        }
        node->names[i] = Py_NewRef(name);
        node->slots[i] = member_offset(node->cls, name);
        if (node->slots[i] < 0) {
            all_slots = 0;
        }
        if (parse_op(PyTuple_GET_ITEM(fields, i), &node->fields[i], size, depth + 1) < 0) {
            free_node(node);
            return -1;
        }
    }
    node->direct = PyObject_IsTrue(direct) == 1 && all_slots && node->cls->tp_alloc != NULL;
    *out = node;
    return 0;
}

static int
parse_int(PyObject *obj, long long *out)
{
    int overflow = 0;
    if (!PyLong_Check(obj)) {
        return spec_error("integer bounds must be int");
    }
    *out = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return spec_error("integer bound out of range");
    }
    return 0;
}

static int
parse_op(PyObject *spec, Op *op, Py_ssize_t size, int depth)
{
    PyObject *code, *value, *child;
    Py_ssize_t end;

    memset(op, 0, sizeof(Op));
    if (depth > MAX_DEPTH) {
        return spec_error("nested too deeply");
    }
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 9) {
        return spec_error("an op is (kind, code, offset, count, flags, lo, hi, value, child)");
    }
    op->kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(spec, 0));
    op->offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, 2));
    op->count = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, 3));
    op->flags = (int)PyLong_AsLong(PyTuple_GET_ITEM(spec, 4));
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return spec_error("kind, offset, count and flags must be int");
    }
    code = PyTuple_GET_ITEM(spec, 1);
    value = PyTuple_GET_ITEM(spec, 7);
    child = PyTuple_GET_ITEM(spec, 8);
    if (!PyUnicode_Check(code) || PyUnicode_GET_LENGTH(code) > 1) {
        return spec_error("code must be a str of at most one character");
    }
    if (PyUnicode_GET_LENGTH(code) == 1) {
        Py_UCS4 c = PyUnicode_READ_CHAR(code, 0);
        op->code = c < 128 ? (char)c : 0;
    }
    op->esize = element_size(op->code);
    if (op->offset < 0 || op->count < 0 || op->count > size) {
        return spec_error("negative or oversized offset / count");
    }

    switch (op->kind) {
    case K_CONST:
        op->count = 0;
        op->value = Py_NewRef(value);
        return 0;
    case K_SCALAR:
    case K_ARRAY:
        if (op->esize == 0) {
            return spec_error("unknown primitive code");
        }
        if (op->kind == K_SCALAR) {
            op->count = 1;
        }
        end = op->offset + op->count * op->esize;
        if (end > size) {
            return spec_error("primitive beyond the payload");
        }
        if (op->flags & ~(F_FINITE | F_NO_INF | F_GE | F_LE | F_ENUM)) {
            return spec_error("unknown rule flag");
        }
        if (is_float_code(op->code)) {
            if (op->flags & F_ENUM) {
                return spec_error("enum rule on a float field");
            }
            op->lo = PyFloat_AsDouble(PyTuple_GET_ITEM(spec, 5));
            op->hi = PyFloat_AsDouble(PyTuple_GET_ITEM(spec, 6));
            if (PyErr_Occurred()) {
                PyErr_Clear();
                return spec_error("float bounds must be numbers");
            }
        }
        else {
            if ((op->flags & (F_FINITE | F_NO_INF)) || (op->code == '?' && op->flags)) {
                return spec_error("float rule on an integer or bool field");
            }
            if ((op->flags & (F_GE | F_LE | F_ENUM)) && (op->code == 'q' || op->code == 'Q')) {
                return spec_error("bounds on a 64-bit field");
            }
            if (parse_int(PyTuple_GET_ITEM(spec, 5), &op->ilo) < 0
                || parse_int(PyTuple_GET_ITEM(spec, 6), &op->ihi) < 0) {
                return -1;
            }
        }
        if (op->flags & F_ENUM) {
            if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 2
                || !PyTuple_Check(PyTuple_GET_ITEM(value, 1))
                || parse_int(PyTuple_GET_ITEM(value, 0), &op->base) < 0) {
                PyErr_Clear();
                return spec_error("an enum rule needs (base, table)");
            }
            op->value = Py_NewRef(PyTuple_GET_ITEM(value, 1));
        }
        return 0;
    case K_BLOB:
        if (op->offset + op->count > size || op->flags != 0) {
            return spec_error("blob beyond the payload");
        }
        op->esize = 1;
        return 0;
    case K_NODE:
        return parse_node(child, &op->node, size, depth);
    case K_NODES:
        if (!PyTuple_Check(child) || PyTuple_GET_SIZE(child) != op->count) {
            return spec_error("a message sequence needs one op per element");
        }
        op->items = PyMem_Calloc(op->count ? op->count : 1, sizeof(Op));
        if (op->items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < op->count; i++) {
            Op *item = &op->items[i];
            if (parse_op(PyTuple_GET_ITEM(child, i), item, size, depth + 1) < 0) {
                return -1; /* free_op of the parent releases the items parsed so far */
            }
            if (item->kind != K_NODE && item->kind != K_CONST) {
                return spec_error("message sequence elements are nodes or constants");
            }
        }
        return 0;
    default:
        return spec_error("unknown op kind");
    }
}

/* ------------------------------------------------------------------------------------------ */
/* decoding                                                                                   */
/* ------------------------------------------------------------------------------------------ */
static unsigned long long
read_le(const unsigned char *p, int size)
{
    unsigned long long v = 0;
    for (int i = size - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static int
float_ok(const Op *op, double v)
{
    int flags = op->flags;
    if ((flags & F_FINITE) && !isfinite(v)) {
        return 0;
    }
    if ((flags & F_NO_INF) && isinf(v)) {
        return 0;
    }
    if ((flags & F_GE) && v < op->lo) {
        return 0;
    }
    if ((flags & F_LE) && v > op->hi) {
        return 0;
    }
    return 1;
}

/* A little-endian float32 as struct.unpack("<f") reads it. On little-endian hosts a non-NaN value
 * is a plain conversion (PyFloat_Unpack4 does exactly that); NaN goes through PyFloat_Unpack4, which
 * is where versions differ in how they keep a NaN's payload. */
static double
unpack_f32(const unsigned char *p)
{
#if PY_LITTLE_ENDIAN
    float f;
    memcpy(&f, p, 4);
    if (!isnan(f)) {
        return (double)f;
    }
#endif
    return PyFloat_Unpack4((const char *)p, 1);
}

/* One element at p: a new reference, or NULL with *miss set (rule broken) or an exception. */
static PyObject *
decode_element(const Op *op, const unsigned char *p, int *miss)
{
    double d;
    long long v;
    unsigned long long u;

    switch (op->code) {
    case 'f':
        d = unpack_f32(p);
        if (d == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
        if (op->flags && !float_ok(op, d)) {
            *miss = 1;
            return NULL;
        }
        return PyFloat_FromDouble(d);
    case 'd':
        d = PyFloat_Unpack8((const char *)p, 1);
        if (d == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
        if (op->flags && !float_ok(op, d)) {
            *miss = 1;
            return NULL;
        }
        return PyFloat_FromDouble(d);
    case '?':
        return PyBool_FromLong(p[0] != 0);
    case 'Q':
        return PyLong_FromUnsignedLongLong(read_le(p, 8));
    default:
        break;
    }
    u = read_le(p, op->esize);
    switch (op->code) {
    case 'b': v = (signed char)u; break;
    case 'h': v = (short)u; break;
    case 'i': v = (int)u; break;
    case 'q': v = (long long)u; break;
    default: v = (long long)u; break; /* B H I: zero-extended */
    }
    if (op->flags) {
        if (((op->flags & F_GE) && v < op->ilo) || ((op->flags & F_LE) && v > op->ihi)) {
            *miss = 1;
            return NULL;
        }
        if (op->flags & F_ENUM) {
            long long index = v - op->base;
            PyObject *member;
            if (index < 0 || index >= PyTuple_GET_SIZE(op->value)) {
                *miss = 1;
                return NULL;
            }
            member = PyTuple_GET_ITEM(op->value, index);
            if (member == Py_None) {
                *miss = 1;
                return NULL;
            }
            return Py_NewRef(member);
        }
    }
    return PyLong_FromLongLong(v);
}

static PyObject *decode_op(const Op *op, const unsigned char *buf, int *miss);

static PyObject *
decode_node(const Node *node, const unsigned char *buf, int *miss)
{
    PyObject *obj, *args, *value;

    if (node->direct) {
        obj = node->cls->tp_alloc(node->cls, 0);
        if (obj == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < node->nfields; i++) {
            value = decode_op(&node->fields[i], buf, miss);
            if (value == NULL) {
                Py_DECREF(obj); /* unset slots are NULL: deallocation skips them */
                return NULL;
            }
            *(PyObject **)((char *)obj + node->slots[i]) = value;
        }
        return obj;
    }
    args = PyTuple_New(node->nfields);
    if (args == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < node->nfields; i++) {
        value = decode_op(&node->fields[i], buf, miss);
        if (value == NULL) {
            Py_DECREF(args);
            return NULL;
        }
        PyTuple_SET_ITEM(args, i, value);
    }
    obj = PyObject_Call((PyObject *)node->cls, args, NULL);
    Py_DECREF(args);
    return obj;
}

static PyObject *
decode_op(const Op *op, const unsigned char *buf, int *miss)
{
    PyObject *tuple, *item;

    switch (op->kind) {
    case K_CONST:
        return Py_NewRef(op->value);
    case K_SCALAR:
        return decode_element(op, buf + op->offset, miss);
    case K_ARRAY:
        tuple = PyTuple_New(op->count);
        if (tuple == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < op->count; i++) {
            item = decode_element(op, buf + op->offset + i * op->esize, miss);
            if (item == NULL) {
                Py_DECREF(tuple);
                return NULL;
            }
            PyTuple_SET_ITEM(tuple, i, item);
        }
        return tuple;
    case K_BLOB:
        return PyBytes_FromStringAndSize((const char *)buf + op->offset, op->count);
    case K_NODE:
        return decode_node(op->node, buf, miss);
    case K_NODES:
        tuple = PyTuple_New(op->count);
        if (tuple == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < op->count; i++) {
            item = decode_op(&op->items[i], buf, miss);
            if (item == NULL) {
                Py_DECREF(tuple);
                return NULL;
            }
            PyTuple_SET_ITEM(tuple, i, item);
        }
        return tuple;
    default:
        PyErr_SetString(PyExc_SystemError, "corrupt layout program");
        return NULL;
    }
}

static PyObject *
Program_decode(ProgramObject *self, PyObject *data)
{
    const unsigned char *buf;
    Py_ssize_t n;
    Py_buffer view;
    int have_view = 0, miss = 0;
    PyObject *result;

    if (PyBytes_CheckExact(data)) {
        buf = (const unsigned char *)PyBytes_AS_STRING(data);
        n = PyBytes_GET_SIZE(data);
    }
    else {
        if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
            PyErr_Clear(); /* not a contiguous buffer: the generic engine explains */
            return Py_NewRef(self->miss);
        }
        have_view = 1;
        buf = view.buf;
        n = view.len;
    }
    if (n < self->size || n > self->size + 3) {
        result = Py_NewRef(self->miss);
        goto done;
    }
    {
        const char *expected = PyBytes_AS_STRING(self->template);
        for (Py_ssize_t i = 0; i < self->nspans; i++) {
            Py_ssize_t offset = self->spans[2 * i], length = self->spans[2 * i + 1];
            if (memcmp(buf + offset, expected + offset, (size_t)length) != 0) {
                result = Py_NewRef(self->miss);
                goto done;
            }
        }
    }
    result = decode_op(&self->root, buf, &miss);
    if (result == NULL && miss && !PyErr_Occurred()) {
        result = Py_NewRef(self->miss);
    }
done:
    if (have_view) {
        PyBuffer_Release(&view);
    }
    return result;
}

/* ------------------------------------------------------------------------------------------ */
/* encoding: 0 = written, 1 = this program cannot pack the value exactly (miss), -1 = error     */
/* ------------------------------------------------------------------------------------------ */
static void
write_le(unsigned char *p, int size, unsigned long long v)
{
    for (int i = 0; i < size; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static int
encode_element(const Op *op, PyObject *v, unsigned char *p)
{
    double d;
    long long s;
    int overflow = 0;

    switch (op->code) {
    case 'f':
        if (!PyFloat_CheckExact(v)) {
            return 1;
        }
        d = PyFloat_AS_DOUBLE(v);
        if (isfinite(d) && fabs(d) > FLT_MAX) {
            return 1; /* the generic engine names the field */
        }
#if PY_LITTLE_ENDIAN
        if (!isnan(d)) { /* exactly what PyFloat_Pack4 does for these values, without the call */
            float f = (float)d;
            memcpy(p, &f, 4);
            return 0;
        }
#endif
        if (PyFloat_Pack4(d, (char *)p, 1) < 0) {
            PyErr_Clear();
            return 1;
        }
        return 0;
    case 'd':
        if (!PyFloat_CheckExact(v)) {
            return 1;
        }
        if (PyFloat_Pack8(PyFloat_AS_DOUBLE(v), (char *)p, 1) < 0) {
            PyErr_Clear();
            return 1;
        }
        return 0;
    case '?':
        if (v == Py_True) {
            p[0] = 1;
        }
        else if (v == Py_False) {
            p[0] = 0;
        }
        else {
            return 1;
        }
        return 0;
    default:
        break;
    }
    if (!PyLong_Check(v) || PyBool_Check(v)) {
        return 1;
    }
    if (op->code == 'Q') {
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 1;
        }
        write_le(p, 8, u);
        return 0;
    }
    s = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (s == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 1;
    }
    switch (op->code) {
    case 'b': if (s < -128 || s > 127) return 1; break;
    case 'B': if (s < 0 || s > 0xFF) return 1; break;
    case 'h': if (s < -32768 || s > 32767) return 1; break;
    case 'H': if (s < 0 || s > 0xFFFF) return 1; break;
    case 'i': if (s < -2147483647LL - 1 || s > 2147483647LL) return 1; break;
    case 'I': if (s < 0 || s > 0xFFFFFFFFLL) return 1; break;
    default: break; /* q: any long long */
    }
    write_le(p, op->esize, (unsigned long long)s);
    return 0;
}

static int encode_op(const Op *op, PyObject *v, unsigned char *out);

static int
encode_node(const Node *node, PyObject *obj, unsigned char *out)
{
    if (Py_TYPE(obj) != node->cls) {
        return 1;
    }
    for (Py_ssize_t i = 0; i < node->nfields; i++) {
        PyObject *value;
        int rc;
        if (node->slots[i] >= 0) {
            value = *(PyObject **)((char *)obj + node->slots[i]);
            if (value == NULL) {
                return 1;
            }
            Py_INCREF(value);
        }
        else {
            value = PyObject_GetAttr(obj, node->names[i]);
            if (value == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                    return -1;
                }
                PyErr_Clear();
                return 1;
            }
        }
        rc = encode_op(&node->fields[i], value, out);
        Py_DECREF(value);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int
encode_op(const Op *op, PyObject *v, unsigned char *out)
{
    int rc;

    switch (op->kind) {
    case K_CONST:
        if (v == op->value) {
            return 0;
        }
        if (Py_TYPE(v) != Py_TYPE(op->value)) {
            return 1;
        }
        rc = PyObject_RichCompareBool(v, op->value, Py_EQ);
        if (rc < 0) {
            PyErr_Clear();
            return 1;
        }
        return rc ? 0 : 1;
    case K_SCALAR:
        return encode_element(op, v, out + op->offset);
    case K_ARRAY:
        if (!PyTuple_CheckExact(v) || PyTuple_GET_SIZE(v) != op->count) {
            return 1;
        }
        for (Py_ssize_t i = 0; i < op->count; i++) {
            rc = encode_element(op, PyTuple_GET_ITEM(v, i), out + op->offset + i * op->esize);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    case K_BLOB:
        if (!PyBytes_CheckExact(v) || PyBytes_GET_SIZE(v) != op->count) {
            return 1;
        }
        memcpy(out + op->offset, PyBytes_AS_STRING(v), (size_t)op->count);
        return 0;
    case K_NODE:
        return encode_node(op->node, v, out);
    case K_NODES:
        if (!PyTuple_CheckExact(v) || PyTuple_GET_SIZE(v) != op->count) {
            return 1;
        }
        for (Py_ssize_t i = 0; i < op->count; i++) {
            PyObject *item = PyTuple_GET_ITEM(v, i);
            Py_INCREF(item);
            rc = encode_op(&op->items[i], item, out);
            Py_DECREF(item);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    default:
        PyErr_SetString(PyExc_SystemError, "corrupt layout program");
        return -1;
    }
}

static PyObject *
Program_encode(ProgramObject *self, PyObject *obj)
{
    PyObject *out = PyBytes_FromStringAndSize(PyBytes_AS_STRING(self->template), self->size);
    int rc;
    if (out == NULL) {
        return NULL;
    }
    rc = encode_op(&self->root, obj, (unsigned char *)PyBytes_AS_STRING(out));
    if (rc == 0) {
        return out;
    }
    Py_DECREF(out);
    if (rc < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------ */
/* the Program type                                                                           */
/* ------------------------------------------------------------------------------------------ */
static void
Program_dealloc(ProgramObject *self)
{
    free_op(&self->root);
    PyMem_Free(self->spans);
    Py_XDECREF(self->template);
    Py_XDECREF(self->miss);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Program_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *spec, *miss, *spans;
    ProgramObject *self;

    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Program(spec, miss) takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO:Program", &spec, &miss)) {
        return NULL;
    }
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 4) {
        spec_error("spec is (size, template, spans, root)");
        return NULL;
    }
    self = (ProgramObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->miss = Py_NewRef(miss);
    self->size = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, 0));
    if (self->size == -1 && PyErr_Occurred()) {
        goto fail;
    }
    self->template = Py_NewRef(PyTuple_GET_ITEM(spec, 1));
    if (self->size < 4 || !PyBytes_CheckExact(self->template)
        || PyBytes_GET_SIZE(self->template) != self->size) {
        spec_error("template must be bytes of the layout size (>= 4)");
        goto fail;
    }
    spans = PyTuple_GET_ITEM(spec, 2);
    if (!PyTuple_Check(spans)) {
        spec_error("spans must be a tuple");
        goto fail;
    }
    self->nspans = PyTuple_GET_SIZE(spans);
    self->spans = PyMem_Calloc(2 * (self->nspans ? self->nspans : 1), sizeof(Py_ssize_t));
    if (self->spans == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < self->nspans; i++) {
        Py_ssize_t offset, length;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(spans, i), "nn", &offset, &length)) {
            PyErr_Clear();
            spec_error("a span is (offset, length)");
            goto fail;
        }
        if (offset < 0 || length < 0 || offset > self->size || length > self->size - offset) {
            spec_error("span beyond the payload");
            goto fail;
        }
        self->spans[2 * i] = offset;
        self->spans[2 * i + 1] = length;
    }
    if (parse_op(PyTuple_GET_ITEM(spec, 3), &self->root, self->size, 0) < 0) {
        goto fail;
    }
    if (self->root.kind != K_NODE && self->root.kind != K_CONST) {
        spec_error("the root is a message or a constant");
        goto fail;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static PyMethodDef Program_methods[] = {
    {"decode", (PyCFunction)Program_decode, METH_O,
     "decode(data) -> message, or the miss marker if data does not have this layout or breaks "
     "a wire rule."},
    {"encode", (PyCFunction)Program_encode, METH_O,
     "encode(obj) -> bytes, or None if obj does not have this layout."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "jointbus.codec._cdr_accel.Program",
    .tp_doc = "A compiled CDR layout: Program((size, template, spans, root), miss).",
    .tp_basicsize = sizeof(ProgramObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Program_new,
    .tp_dealloc = (destructor)Program_dealloc,
    .tp_methods = Program_methods,
};

/* ------------------------------------------------------------------------------------------ */
/* the receive path's per-sample core: LatencyStats and SampleGate                            */
/* ------------------------------------------------------------------------------------------ */
/*
 * Why it is here: the Zenoh receive path (jointbus/bus/zenoh_transport.py) spent ~4 us of Python
 * per sample before the user's callback (clocks, attachment parsing, sequence-gap and latency
 * bookkeeping, the delivery plan, decode): the bus then reached 0.4-0.6x raw Zenoh's throughput
 * and added ~12 us at 1 kHz, where every sample meets cold caches. SampleGate.receive does the
 * steady state of that path in one call; everything that is not the steady state (no or foreign
 * attachment, a publisher seen for the first time or whose plan is stale, a gap, a payload that
 * does not decode, a transient-local subscriber) is handed back to Python untouched, so the
 * Python path stays the one place where events are reported. jointbus/bus/sample_gate.py is the
 * pure-Python twin (same contract; the tests run both).
 *
 * SampleGate(decode, last_seq, plans):
 *   decode    callable(bytes) -> message; raises on a malformed payload;
 *   last_seq  dict: publisher GID (16 bytes) -> last sequence number seen (shared with Python);
 *   plans     dict: GID -> (subs, generation, targets): the delivery plan Python computed for
 *             that publisher while the local subscriber tuple was `subs` (same object) and the
 *             discovery generation was `generation`; targets = ((offer, stats), ...), or None:
 *             drop the publisher's samples (type mismatch).
 * receive(attachment, payload, subs, generation) -> None (handled) or
 *   (attachment bytes or None, now_mono_ns, now_wall_ns): Python must handle this sample; nothing
 *   was changed. attachment / payload: bytes, or objects with to_bytes() (Zenoh's ZBytes).
 * Handled = samples += 1, last_seq[gid] = seq, latency = now_wall - source time (clamped to
 * +-2^62 ns), born = now_mono - latency if latency > 0 else now_mono, then for each target:
 * stats.note(latency); offer(message, born, now_mono).
 */
#define LATENCY_CLAMP (1LL << 62)

typedef struct {
    PyObject_HEAD
    long long count;
    long long last;
    long long max;
    long long partial;  /* running sum; folded into `big` before it would overflow */
    PyObject *big;      /* NULL or an int: the folded part of the sum */
} LatencyStatsObject;

static PyTypeObject LatencyStatsType;

static int
latency_note(LatencyStatsObject *self, long long v)
{
    long long sum;
    if (__builtin_add_overflow(self->partial, v, &sum)) {
        PyObject *part = PyLong_FromLongLong(self->partial), *total;
        if (part == NULL) {
            return -1;
        }
        total = self->big == NULL ? Py_NewRef(part) : PyNumber_Add(self->big, part);
        Py_DECREF(part);
        if (total == NULL) {
            return -1;
        }
        Py_XSETREF(self->big, total);
        sum = v;
    }
    self->partial = sum;
    self->count += 1;
    self->last = v;
    if (v > self->max) {
        self->max = v;
    }
    return 0;
}

static PyObject *
LatencyStats_note(LatencyStatsObject *self, PyObject *arg)
{
    long long v = PyLong_AsLongLong(arg);
    if (v == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (v > LATENCY_CLAMP || v < -LATENCY_CLAMP) {
        PyErr_SetString(PyExc_ValueError, "latency beyond +-2**62 ns (clamp it first)");
        return NULL;
    }
    if (latency_note(self, v) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
LatencyStats_get_sum(LatencyStatsObject *self, void *closure)
{
    PyObject *part = PyLong_FromLongLong(self->partial), *total;
    (void)closure;
    if (part == NULL || self->big == NULL) {
        return part;
    }
    total = PyNumber_Add(self->big, part);
    Py_DECREF(part);
    return total;
}

static PyObject *
LatencyStats_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "LatencyStats() takes no arguments");
        return NULL;
    }
    return type->tp_alloc(type, 0);
}

static void
LatencyStats_dealloc(LatencyStatsObject *self)
{
    Py_CLEAR(self->big);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef LatencyStats_members[] = {
    {"count", T_LONGLONG, offsetof(LatencyStatsObject, count), READONLY, "latencies noted"},
    {"last", T_LONGLONG, offsetof(LatencyStatsObject, last), READONLY, "last latency (ns)"},
    {"max", T_LONGLONG, offsetof(LatencyStatsObject, max), READONLY,
     "largest latency (ns), 0 if none was positive"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef LatencyStats_getset[] = {
    {"sum", (getter)LatencyStats_get_sum, NULL, "sum of the latencies (ns)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef LatencyStats_methods[] = {
    {"note", (PyCFunction)LatencyStats_note, METH_O, "note(latency_ns): count one latency."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LatencyStatsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "jointbus.codec._cdr_accel.LatencyStats",
    .tp_doc = "A subscriber's latency counters: count, sum, last, max (ns).",
    .tp_basicsize = sizeof(LatencyStatsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = LatencyStats_new,
    .tp_dealloc = (destructor)LatencyStats_dealloc,
    .tp_members = LatencyStats_members,
    .tp_getset = LatencyStats_getset,
    .tp_methods = LatencyStats_methods,
};

typedef struct {
    PyObject_HEAD
    PyObject *decode;
    PyObject *last_seq;
    PyObject *plans;
    long long samples;
} SampleGateObject;

static PyObject *str_to_bytes;

/* A new reference to the bytes of `obj` (bytes itself, or obj.to_bytes()). */
static PyObject *
as_bytes(PyObject *obj)
{
    PyObject *out;
    if (PyBytes_CheckExact(obj)) {
        return Py_NewRef(obj);
    }
    out = PyObject_CallMethodNoArgs(obj, str_to_bytes);
    if (out != NULL && !PyBytes_Check(out)) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_TypeError, "to_bytes() did not return bytes");
        return NULL;
    }
    return out;
}

static long long
read_i64(const unsigned char *p)
{
    return (long long)read_le(p, 8);
}

static long long
wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long
mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static PyObject *
SampleGate_receive(SampleGateObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *att, *payload, *subs, *generation;
    PyObject *raw = NULL, *gid = NULL, *data = NULL, *msg = NULL;
    PyObject *seq_obj = NULL, *born_obj = NULL, *now_obj = NULL, *result = NULL;
    PyObject *plan = NULL, *targets, *last;
    long long now_wall, now_mono, seq, source, latency, born;
    const unsigned char *buf;
    int eq;

    now_wall = wall_ns();
    now_mono = mono_ns();
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "receive(attachment, payload, subs, generation)");
        return NULL;
    }
    att = args[0];
    payload = args[1];
    subs = args[2];
    generation = args[3];
    if (!PyTuple_Check(subs)) {
        PyErr_SetString(PyExc_TypeError, "subs must be a tuple");
        return NULL;
    }
    if (PyTuple_GET_SIZE(subs) == 0) {
        self->samples += 1;  /* nobody local listens: counted, nothing else */
        Py_RETURN_NONE;
    }
    if (att == Py_None) {
        goto slow;
    }
    raw = as_bytes(att);
    if (raw == NULL) {
        return NULL;
    }
    buf = (const unsigned char *)PyBytes_AS_STRING(raw);
    if (PyBytes_GET_SIZE(raw) != 33 || buf[16] != 16) {
        goto slow;
    }
    gid = PyBytes_FromStringAndSize((const char *)buf + 17, 16);
    if (gid == NULL) {
        goto error;
    }
    /* A strong reference: decoding (and reading the payload) runs Python code, during which
     * another receive thread may replace this publisher's plan in the dict; a borrowed plan (and
     * its targets) would be freed under us. */
    plan = PyDict_GetItemWithError(self->plans, gid);
    if (plan == NULL) {
        if (PyErr_Occurred()) {
            goto error;
        }
        goto slow;
    }
    Py_INCREF(plan);
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 3
        || PyTuple_GET_ITEM(plan, 0) != subs) {
        goto slow;
    }
    eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(plan, 1), generation, Py_EQ);
    if (eq < 0) {
        goto error;
    }
    if (!eq) {
        goto slow;
    }
    targets = PyTuple_GET_ITEM(plan, 2);
    if (targets == Py_None) {
        self->samples += 1;  /* a publisher of another type: dropped (reported at discovery) */
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (!PyTuple_CheckExact(targets)) {
        goto slow;
    }
    seq = read_i64(buf);
    source = read_i64(buf + 8);
    last = PyDict_GetItemWithError(self->last_seq, gid);
    if (last == NULL && PyErr_Occurred()) {
        goto error;
    }
    if (last != NULL) {
        long long last_seq = PyLong_AsLongLong(last);
        if (last_seq == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            goto slow;
        }
        if (last_seq < LLONG_MAX && seq > last_seq + 1) {
            goto slow;  /* a gap: Python counts and reports it */
        }
    }
    data = as_bytes(payload);
    if (data == NULL) {
        goto error;
    }
    msg = PyObject_CallOneArg(self->decode, data);
    if (msg == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) {
            goto error;
        }
        PyErr_Clear();
        goto slow;  /* malformed: Python decodes again, counts and reports it */
    }
    seq_obj = PyLong_FromLongLong(seq);
    if (seq_obj == NULL || PyDict_SetItem(self->last_seq, gid, seq_obj) < 0) {
        goto error;
    }
    self->samples += 1;
    if (__builtin_sub_overflow(now_wall, source, &latency)) {
        latency = source < 0 ? LATENCY_CLAMP : -LATENCY_CLAMP;
    }
    if (latency > LATENCY_CLAMP) {
        latency = LATENCY_CLAMP;
    }
    else if (latency < -LATENCY_CLAMP) {
        latency = -LATENCY_CLAMP;
    }
    born = latency > 0 ? now_mono - latency : now_mono;
    born_obj = PyLong_FromLongLong(born);
    now_obj = PyLong_FromLongLong(now_mono);
    if (born_obj == NULL || now_obj == NULL) {
        goto error;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(targets); i++) {
        PyObject *target = PyTuple_GET_ITEM(targets, i), *stats, *r;
        PyObject *call[3] = {msg, born_obj, now_obj};
        if (!PyTuple_CheckExact(target) || PyTuple_GET_SIZE(target) != 2) {
            PyErr_SetString(PyExc_TypeError, "a plan target is (offer, stats)");
            goto error;
        }
        stats = PyTuple_GET_ITEM(target, 1);
        if (Py_IS_TYPE(stats, &LatencyStatsType)) {
            if (latency_note((LatencyStatsObject *)stats, latency) < 0) {
                goto error;
            }
        }
        else {
            PyObject *lat = PyLong_FromLongLong(latency);
            if (lat == NULL) {
                goto error;
            }
            r = PyObject_CallMethod(stats, "note", "O", lat);
            Py_DECREF(lat);
            if (r == NULL) {
                goto error;
            }
            Py_DECREF(r);
        }
        r = PyObject_Vectorcall(PyTuple_GET_ITEM(target, 0), call, 3, NULL);
        if (r == NULL) {
            goto error;
        }
        Py_DECREF(r);
    }
    result = Py_NewRef(Py_None);
    goto done;
slow:
    result = Py_BuildValue("(OLL)", raw == NULL ? Py_None : raw, now_mono, now_wall);
    goto done;
error:
    result = NULL;
done:
    Py_XDECREF(plan);
    Py_XDECREF(raw);
    Py_XDECREF(gid);
    Py_XDECREF(data);
    Py_XDECREF(msg);
    Py_XDECREF(seq_obj);
    Py_XDECREF(born_obj);
    Py_XDECREF(now_obj);
    return result;
}

static PyObject *
SampleGate_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *decode, *last_seq, *plans;
    SampleGateObject *self;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "SampleGate(decode, last_seq, plans): no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO!O!:SampleGate", &decode, &PyDict_Type, &last_seq,
                          &PyDict_Type, &plans)) {
        return NULL;
    }
    if (!PyCallable_Check(decode)) {
        PyErr_SetString(PyExc_TypeError, "decode must be callable");
        return NULL;
    }
    self = (SampleGateObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->decode = Py_NewRef(decode);
    self->last_seq = Py_NewRef(last_seq);
    self->plans = Py_NewRef(plans);
    return (PyObject *)self;
}

static int
SampleGate_traverse(SampleGateObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->decode);
    Py_VISIT(self->last_seq);
    Py_VISIT(self->plans);
    return 0;
}

static int
SampleGate_clear(SampleGateObject *self)
{
    Py_CLEAR(self->decode);
    Py_CLEAR(self->last_seq);
    Py_CLEAR(self->plans);
    return 0;
}

static void
SampleGate_dealloc(SampleGateObject *self)
{
    PyObject_GC_UnTrack(self);
    SampleGate_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef SampleGate_members[] = {
    {"samples", T_LONGLONG, offsetof(SampleGateObject, samples), 0,
     "samples received (handled here or counted by the Python path)"},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef SampleGate_methods[] = {
    {"receive", (PyCFunction)(void (*)(void))SampleGate_receive, METH_FASTCALL,
     "receive(attachment, payload, subs, generation) -> None if handled, else "
     "(attachment bytes or None, now_mono_ns, now_wall_ns) for the Python path."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SampleGateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "jointbus.codec._cdr_accel.SampleGate",
    .tp_doc = "The steady state of the Zenoh receive path: SampleGate(decode, last_seq, plans).",
    .tp_basicsize = sizeof(SampleGateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = SampleGate_new,
    .tp_dealloc = (destructor)SampleGate_dealloc,
    .tp_traverse = (traverseproc)SampleGate_traverse,
    .tp_clear = (inquiry)SampleGate_clear,
    .tp_members = SampleGate_members,
    .tp_methods = SampleGate_methods,
};

/* ------------------------------------------------------------------------------------------ */
/* the send path's per-message core: Sender                                                    */
/* ------------------------------------------------------------------------------------------ */
/*
 * Sender(put, encode, gid): send(message, seq, mono_ns) -> put(encode(message),
 * attachment=<33 bytes: seq int64 LE, wall-clock ns int64 LE, 0x10, gid>), the rmw_zenoh
 * attachment of jointbus/bus/attachment.py, stamped right before the put. The Python twin is
 * PublisherLink.send in jointbus/bus/zenoh_transport.py; this saves its frame and two calls per
 * message (measured in docs/PERFORMANCE.md).
 */
typedef struct {
    PyObject_HEAD
    PyObject *put;
    PyObject *encode;
    unsigned char gid[16];
} SenderObject;

static PyObject *kw_attachment;

static PyObject *
Sender_send(SenderObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *data, *att, *r;
    PyObject *call[2];
    unsigned char *p;
    long long seq;

    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "send(message, seq, mono_ns)");
        return NULL;
    }
    seq = PyLong_AsLongLong(args[1]);
    if (seq == -1 && PyErr_Occurred()) {
        return NULL;
    }
    data = PyObject_CallOneArg(self->encode, args[0]);
    if (data == NULL) {
        return NULL;
    }
    att = PyBytes_FromStringAndSize(NULL, 33);
    if (att == NULL) {
        Py_DECREF(data);
        return NULL;
    }
    p = (unsigned char *)PyBytes_AS_STRING(att);
    write_le(p, 8, (unsigned long long)seq);
    write_le(p + 8, 8, (unsigned long long)wall_ns());
    p[16] = 16;
    memcpy(p + 17, self->gid, 16);
    call[0] = data;
    call[1] = att;
    r = PyObject_Vectorcall(self->put, call, 1, kw_attachment);
    Py_DECREF(data);
    Py_DECREF(att);
    if (r == NULL) {
        return NULL;
    }
    Py_DECREF(r);
    Py_RETURN_NONE;
}

static PyObject *
Sender_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *put, *encode;
    const char *gid;
    Py_ssize_t gid_len;
    SenderObject *self;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Sender(put, encode, gid): no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOy#:Sender", &put, &encode, &gid, &gid_len)) {
        return NULL;
    }
    if (gid_len != 16 || !PyCallable_Check(put) || !PyCallable_Check(encode)) {
        PyErr_SetString(PyExc_ValueError, "Sender(put, encode, gid): callables and a 16-byte GID");
        return NULL;
    }
    self = (SenderObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->put = Py_NewRef(put);
    self->encode = Py_NewRef(encode);
    memcpy(self->gid, gid, 16);
    return (PyObject *)self;
}

static int
Sender_traverse(SenderObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->put);
    Py_VISIT(self->encode);
    return 0;
}

static int
Sender_clear(SenderObject *self)
{
    Py_CLEAR(self->put);
    Py_CLEAR(self->encode);
    return 0;
}

static void
Sender_dealloc(SenderObject *self)
{
    PyObject_GC_UnTrack(self);
    Sender_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef Sender_methods[] = {
    {"send", (PyCFunction)(void (*)(void))Sender_send, METH_FASTCALL,
     "send(message, seq, mono_ns): put(encode(message), attachment=<rmw_zenoh attachment>)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SenderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "jointbus.codec._cdr_accel.Sender",
    .tp_doc = "The send path's per-message core: Sender(put, encode, gid).",
    .tp_basicsize = sizeof(SenderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Sender_new,
    .tp_dealloc = (destructor)Sender_dealloc,
    .tp_traverse = (traverseproc)Sender_traverse,
    .tp_clear = (inquiry)Sender_clear,
    .tp_methods = Sender_methods,
};

static struct PyModuleDef accel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "jointbus.codec._cdr_accel",
    .m_doc = "Compiled core of jointbus's stable-layout CDR fast path (see _cdr_accel.c).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__cdr_accel(void)
{
    PyObject *module;
    if (PyType_Ready(&ProgramType) < 0 || PyType_Ready(&LatencyStatsType) < 0
        || PyType_Ready(&SampleGateType) < 0 || PyType_Ready(&SenderType) < 0) {
        return NULL;
    }
    kw_attachment = Py_BuildValue("(s)", "attachment");
    if (kw_attachment == NULL) {
        return NULL;
    }
    str_to_bytes = PyUnicode_InternFromString("to_bytes");
    if (str_to_bytes == NULL) {
        return NULL;
    }
    module = PyModule_Create(&accel_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&ProgramType);
    if (PyModule_AddObject(module, "Program", (PyObject *)&ProgramType) < 0) {
        Py_DECREF(&ProgramType);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "LatencyStats", (PyObject *)&LatencyStatsType) < 0
        || PyModule_AddObjectRef(module, "SampleGate", (PyObject *)&SampleGateType) < 0
        || PyModule_AddObjectRef(module, "Sender", (PyObject *)&SenderType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
