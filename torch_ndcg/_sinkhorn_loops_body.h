/* The loops of _sinkhorn_loops.c for one floating point type: included with SCALAR (float or
 * double) and SUFFIX (the names' suffix) defined, which it undefines. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define NAME(x) CAT(x, SUFFIX)
#define LANES (VECTOR_BYTES / (int)sizeof(SCALAR))
#define MAX_VECTORS (MAX_WIDTH / LANES)

#if USE_VECTORS
/* Unaligned: rows of a w x w matrix start anywhere. */
typedef SCALAR NAME(vec) __attribute__((vector_size(VECTOR_BYTES), aligned(sizeof(SCALAR))));
#define VEC NAME(vec)

/* out = x @ m for x [w] and m [w, w], w >= LANES: the columns in nv vectors at column offsets
 * off[v] (the last one ends at column w and may overlap the one before: each column's sum is
 * the same whichever vector holds it). Even and odd rows are summed apart (two independent
 * chains of additions), then added. */
ALWAYS_INLINE void NAME(product)(const SCALAR *m, const SCALAR *x, SCALAR *out, Py_ssize_t w, const int nv,
                                 const Py_ssize_t *off) {
    VEC even[MAX_VECTORS], odd[MAX_VECTORS];
    for (int v = 0; v < nv; v++) even[v] = odd[v] = (VEC){0};
    Py_ssize_t i = 0;
    for (; i + 1 < w; i += 2) {
        const SCALAR *r0 = m + i * w, *r1 = r0 + w;
        const SCALAR x0 = x[i], x1 = x[i + 1];
        for (int v = 0; v < nv; v++) {
            even[v] += x0 * *(const VEC *)(r0 + off[v]);
            odd[v] += x1 * *(const VEC *)(r1 + off[v]);
        }
    }
    if (i < w) {
        const SCALAR *r0 = m + i * w;
        const SCALAR x0 = x[i];
        for (int v = 0; v < nv; v++) even[v] += x0 * *(const VEC *)(r0 + off[v]);
    }
    for (int v = 0; v < nv; v++) *(VEC *)(out + off[v]) = even[v] + odd[v];
}
#endif

/* out = x @ m, column by column, in the same order as the vector lanes. */
static void NAME(product_narrow)(const SCALAR *m, const SCALAR *x, SCALAR *out, Py_ssize_t w) {
    for (Py_ssize_t j = 0; j < w; j++) {
        SCALAR even = 0, odd = 0;
        Py_ssize_t i = 0;
        for (; i + 1 < w; i += 2) {
            even += x[i] * m[i * w + j];
            odd += x[i + 1] * m[(i + 1) * w + j];
        }
        if (i < w) even += x[i] * m[i * w + j];
        out[j] = even + odd;
    }
}

/* The product, with the vector count a constant for the common short lists (the accumulators
 * then live in registers). */
ALWAYS_INLINE void NAME(multiply)(const SCALAR *m, const SCALAR *x, SCALAR *out, Py_ssize_t w, int nv,
                                  const Py_ssize_t *off) {
#if USE_VECTORS
    switch (nv) {
    case 0: NAME(product_narrow)(m, x, out, w); break;
    case 1: NAME(product)(m, x, out, w, 1, off); break;
    case 2: NAME(product)(m, x, out, w, 2, off); break;
    case 3: NAME(product)(m, x, out, w, 3, off); break;
    case 4: NAME(product)(m, x, out, w, 4, off); break;
    default: NAME(product)(m, x, out, w, nv, off); break;
    }
#else
    (void)nv;
    (void)off;
    NAME(product_narrow)(m, x, out, w);
#endif
}

/* Column offsets of the vectors of a row (none below LANES columns: those run narrow). */
static int NAME(offsets)(Py_ssize_t w, Py_ssize_t *off) {
    if (w < LANES) return 0;
    int nv = (int)(w / LANES);
    for (int v = 0; v < nv; v++) off[v] = (Py_ssize_t)v * LANES;
    if (w % LANES) off[nv++] = w - LANES;
    return nv;
}

CLONES static void NAME(scalings)(SCALAR *history, const SCALAR *start, const SCALAR *right0, const SCALAR *right1,
                                 const unsigned char *kinds, Py_ssize_t steps, Py_ssize_t batch, Py_ssize_t w) {
    Py_ssize_t off[MAX_VECTORS + 1];
    SCALAR x[MAX_WIDTH], sums[MAX_WIDTH];
    const int nv = NAME(offsets)(w, off);
    for (Py_ssize_t b = 0; b < batch; b++) {
        const SCALAR *mats[2] = {right0 + b * w * w, right1 + b * w * w};
        memcpy(x, start + b * w, (size_t)w * sizeof(SCALAR));
        for (Py_ssize_t h = 0; h < steps; h++) {
            NAME(multiply)(mats[kinds[h]], x, sums, w, nv, off);
            SCALAR *row = history + (h * batch + b) * w;
            for (Py_ssize_t j = 0; j < w; j++) row[j] = x[j] = (SCALAR)1 / sums[j];
        }
    }
}

CLONES static void NAME(walk_back)(SCALAR *pq, const SCALAR *right0, const SCALAR *right1, const unsigned char *kinds,
                                  Py_ssize_t steps, Py_ssize_t batch, Py_ssize_t w) {
    Py_ssize_t off[MAX_VECTORS + 1];
    SCALAR x[MAX_WIDTH], sums[MAX_WIDTH];
    const int nv = NAME(offsets)(w, off);
    for (Py_ssize_t b = 0; b < batch && steps > 1; b++) {
        const SCALAR *mats[2] = {right0 + b * w * w, right1 + b * w * w};
        memcpy(x, pq + ((steps - 1) * batch + b) * w, (size_t)w * sizeof(SCALAR));
        for (Py_ssize_t h = steps - 1; h >= 1; h--) {
            NAME(multiply)(mats[kinds[h]], x, sums, w, nv, off);
            SCALAR *lower = pq + ((h - 1) * batch + b) * w;
            for (Py_ssize_t j = 0; j < w; j++) x[j] = lower[j] *= sums[j];
        }
    }
}

#undef VEC
#undef LANES
#undef SCALAR
#undef SUFFIX
#undef MAX_VECTORS
#undef NAME
#undef CAT
#undef CAT_
