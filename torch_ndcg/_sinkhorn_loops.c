/* The two loops of NeuralNDCG's kernel Sinkhorn on the CPU, for short lists: every half-step of
 * every list in one call (torch_ndcg/losses/relaxations/sinkhorn/loops.py calls it; nothing else should).
 *
 *   scalings(history, start, right0, right1, kinds)
 *       history[h, b] = 1 / (x @ right_k[b]),  k = kinds[h],  x = start[b] for h = 0, else history[h-1, b]
 *   walk_back(pq, right0, right1, kinds)
 *       pq[h-1, b] *= pq[h, b] @ right_k[b],   k = kinds[h],  for h = S-1 down to 1
 *
 * history/pq [S, B, w], start [B, w], right0/right1 [B, w, w]: C-contiguous float32 or float64
 * buffers of one type; kinds: bytes, each 0 or 1. A row vector times a matrix is summed over its
 * rows in a fixed order (even rows and odd rows apart, then added), with no contraction into
 * fused multiply-adds (the build passes -ffp-contract=off), so every build and every instruction
 * set gives the same bits: a vector lane adds exactly what the scalar loop adds.
 *
 * Why compiled: for short lists a batched BLAS product costs mostly its one BLAS call per list, and
 * a Python loop pays that for every half-step; here each list's two matrices stay in the L1 cache
 * for all of its steps.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* Widest list the loops accept (the caller sends longer lists to torch). */
#define MAX_WIDTH 128

/* -DSINKHORN_LOOPS_SCALAR builds the plain loops that compilers without vector extensions get. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(SINKHORN_LOOPS_SCALAR)
#define USE_VECTORS 1
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define USE_VECTORS 0
#define ALWAYS_INLINE static inline
#endif

/* One portable build with a second copy of the loops for AVX2, picked when the module loads (GNU
 * ifunc): what ships runs on any x86-64, and AVX2 machines run twice as wide. Both copies give
 * the same bits. */
#if USE_VECTORS && defined(__x86_64__) && defined(__linux__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef CLONES
#define CLONES
#endif

#define VECTOR_BYTES 32

#define SCALAR float
#define SUFFIX f32
#include "_sinkhorn_loops_body.h"

#define SCALAR double
#define SUFFIX f64
#include "_sinkhorn_loops_body.h"

typedef struct {
    Py_buffer view;
    int held;
} Buffer;

static void release(Buffer *buffers, int count) {
    for (int i = 0; i < count; i++)
        if (buffers[i].held) PyBuffer_Release(&buffers[i].view);
}

static int take(PyObject *object, Buffer *buffer, int writable, int ndim, const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, &buffer->view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s float32 or float64 buffer", name,
                     writable ? ", writable" : "");
        return -1;
    }
    buffer->held = 1;
    const char *format = buffer->view.format ? buffer->view.format : "B";
    if (format[0] == '<' || format[0] == '=' || format[0] == '@') format++;
    if (strcmp(format, "f") != 0 && strcmp(format, "d") != 0) {
        PyErr_Format(PyExc_TypeError, "%s must hold float32 or float64, got format '%s'", name, buffer->view.format);
        return -1;
    }
    if (buffer->view.ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must have %d dimensions, got %d", name, ndim, buffer->view.ndim);
        return -1;
    }
    return 0;
}

enum { OUT, START, RIGHT0, RIGHT1, BUFFERS };

/* Takes and checks the buffers of either loop (without START for walk_back), then runs it with
 * the GIL released. */
static PyObject *call(PyObject *objects[BUFFERS], Py_buffer *kinds, int forward) {
    const char *names[BUFFERS] = {forward ? "history" : "pq", "start", "right0", "right1"};
    const int dims[BUFFERS] = {3, 2, 3, 3};
    Buffer b[BUFFERS];
    memset(b, 0, sizeof b);
    PyObject *result = NULL;
    for (int i = 0; i < BUFFERS; i++)
        if ((forward || i != START) && take(objects[i], &b[i], i == OUT, dims[i], names[i]) < 0) goto done;
    const Py_ssize_t steps = b[OUT].view.shape[0], batch = b[OUT].view.shape[1], width = b[OUT].view.shape[2];
    for (int i = 0; i < BUFFERS; i++) {
        if (b[i].held && b[i].view.itemsize != b[OUT].view.itemsize) {
            PyErr_SetString(PyExc_TypeError, "every buffer must have the same floating point type");
            goto done;
        }
    }
    for (int i = RIGHT0; i <= RIGHT1; i++) {
        const Py_ssize_t *shape = b[i].view.shape;
        if (shape[0] != batch || shape[1] != width || shape[2] != width) {
            PyErr_Format(PyExc_ValueError, "the matrices must be [%zd, %zd, %zd] to match %s", batch, width, width,
                         names[OUT]);
            goto done;
        }
    }
    if (forward && (b[START].view.shape[0] != batch || b[START].view.shape[1] != width)) {
        PyErr_Format(PyExc_ValueError, "start must be [%zd, %zd] to match history", batch, width);
        goto done;
    }
    if (width < 1 || width > MAX_WIDTH) {
        PyErr_Format(PyExc_ValueError, "lists must have 1 to %d items, got %zd", MAX_WIDTH, width);
        goto done;
    }
    if (kinds->len < steps) {
        PyErr_Format(PyExc_ValueError, "kinds must name the kind of each of the %zd steps, got %zd", steps, kinds->len);
        goto done;
    }
    const unsigned char *k = kinds->buf;
    for (Py_ssize_t h = 0; h < steps; h++) {
        if (k[h] > 1) {
            PyErr_SetString(PyExc_ValueError, "kinds must be bytes of 0 or 1");
            goto done;
        }
    }
    void *out = b[OUT].view.buf, *start = b[START].view.buf, *right0 = b[RIGHT0].view.buf, *right1 = b[RIGHT1].view.buf;
    const int single = b[OUT].view.itemsize == 4;
    Py_BEGIN_ALLOW_THREADS
    if (forward && single)
        scalings_f32(out, start, right0, right1, k, steps, batch, width);
    else if (forward)
        scalings_f64(out, start, right0, right1, k, steps, batch, width);
    else if (single)
        walk_back_f32(out, right0, right1, k, steps, batch, width);
    else
        walk_back_f64(out, right0, right1, k, steps, batch, width);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    release(b, BUFFERS);
    PyBuffer_Release(kinds);
    return result;
}

static PyObject *scalings(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *objects[BUFFERS];
    Py_buffer kinds;
    if (!PyArg_ParseTuple(args, "OOOOy*:scalings", &objects[OUT], &objects[START], &objects[RIGHT0], &objects[RIGHT1],
                          &kinds))
        return NULL;
    return call(objects, &kinds, 1);
}

static PyObject *walk_back(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *objects[BUFFERS] = {NULL};
    Py_buffer kinds;
    if (!PyArg_ParseTuple(args, "OOOy*:walk_back", &objects[OUT], &objects[RIGHT0], &objects[RIGHT1], &kinds))
        return NULL;
    return call(objects, &kinds, 0);
}

static PyMethodDef methods[] = {
    {"scalings", scalings, METH_VARARGS,
     "scalings(history, start, right0, right1, kinds): history[h, b] = 1 / (x @ right_k[b]) for every step h"},
    {"walk_back", walk_back, METH_VARARGS,
     "walk_back(pq, right0, right1, kinds): pq[h-1, b] *= pq[h, b] @ right_k[b] for h = S-1 down to 1"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_sinkhorn_loops",
    .m_doc = "NeuralNDCG's kernel Sinkhorn loops for short CPU lists, compiled at install.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__sinkhorn_loops(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "MAX_WIDTH", MAX_WIDTH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
