/* The two sequential loops of NeuralNDCG's kernel Sinkhorn, one list at a time in cache.
 *
 * Each step multiplies a row vector by one of two [w, w] matrices of its list (K or K^T):
 *   scalings:  rows[h] = 1 / (rows[h - 1] @ right[kinds[h]]),  rows[-1] = start   (the forward)
 *   walk_back: rows[h - 1] *= rows[h] @ m[kinds[h]],  h = steps - 1 .. 1          (the backward)
 * with rows laid out [steps, b, w] and matrices [b, w, w], all C-contiguous.
 *
 * In torch or NumPy every step is one batched call of b small BLAS products, whose fixed cost is
 * most of a step for w < 100. Here a list's two matrices are copied once into rows padded to
 * whole vectors (they stay in L1/L2 for all its steps) and a step is w vector multiply-adds per
 * column block, on the compiler's vector extension (GCC and Clang). Operations are IEEE: no
 * reassociation flags, so NaN and inf propagate as in the reference.
 */
#include <stdlib.h>
#include <string.h>

#define DEFINE_CHAIN(T, SUFFIX)                                                                    \
    enum { LANES_##SUFFIX = 64 / sizeof(T) };                                                      \
    typedef T vec_##SUFFIX __attribute__((vector_size(64)));                                       \
                                                                                                   \
    static inline vec_##SUFFIX load_##SUFFIX(const T *from) {                                      \
        vec_##SUFFIX v;                                                                            \
        memcpy(&v, from, sizeof v);                                                                \
        return v;                                                                                  \
    }                                                                                              \
                                                                                                   \
    /* out[0:p] = sum_{i < w} x[i] m[i, 0:p], m with row stride p (whole vectors). Independent   \
       accumulators (two per block) hide the multiply-add latency. */                              \
    static void vecmat_##SUFFIX(const T *restrict x, const T *restrict m, T *restrict out, int w,  \
                                int p) {                                                           \
        const int lanes = LANES_##SUFFIX;                                                          \
        int c = 0;                                                                                 \
        for (; c + 2 * lanes <= p; c += 2 * lanes) {                                               \
            vec_##SUFFIX a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0};                                   \
            const T *col = m + c;                                                                  \
            int i = 0;                                                                             \
            for (; i + 2 <= w; i += 2) {                                                           \
                const T *r0 = col + (size_t)i * p, *r1 = r0 + p;                                   \
                a0 += x[i] * load_##SUFFIX(r0);                                                    \
                b0 += x[i] * load_##SUFFIX(r0 + lanes);                                            \
                a1 += x[i + 1] * load_##SUFFIX(r1);                                                \
                b1 += x[i + 1] * load_##SUFFIX(r1 + lanes);                                        \
            }                                                                                      \
            if (i < w) {                                                                           \
                const T *r0 = col + (size_t)i * p;                                                 \
                a0 += x[i] * load_##SUFFIX(r0);                                                    \
                b0 += x[i] * load_##SUFFIX(r0 + lanes);                                            \
            }                                                                                      \
            vec_##SUFFIX s0 = a0 + a1, s1 = b0 + b1;                                               \
            memcpy(out + c, &s0, sizeof s0);                                                       \
            memcpy(out + c + lanes, &s1, sizeof s1);                                               \
        }                                                                                          \
        for (; c < p; c += lanes) {                                                                \
            vec_##SUFFIX a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                   \
            const T *col = m + c;                                                                  \
            int i = 0;                                                                             \
            for (; i + 4 <= w; i += 4) {                                                           \
                const T *r = col + (size_t)i * p;                                                  \
                a0 += x[i] * load_##SUFFIX(r);                                                     \
                a1 += x[i + 1] * load_##SUFFIX(r + p);                                             \
                a2 += x[i + 2] * load_##SUFFIX(r + 2 * (size_t)p);                                 \
                a3 += x[i + 3] * load_##SUFFIX(r + 3 * (size_t)p);                                 \
            }                                                                                      \
            for (; i < w; i++) a0 += x[i] * load_##SUFFIX(col + (size_t)i * p);                    \
            vec_##SUFFIX sum = (a0 + a1) + (a2 + a3);                                              \
            memcpy(out + c, &sum, sizeof sum);                                                     \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* The list's [w, w] matrix into rows of stride p, zero past column w. */                      \
    static void pad_##SUFFIX(const T *from, T *to, int w, int p) {                                 \
        for (int i = 0; i < w; i++) {                                                              \
            memcpy(to + (size_t)i * p, from + (size_t)i * w, sizeof(T) * w);                       \
            memset(to + (size_t)i * p + w, 0, sizeof(T) * (p - w));                                \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* Room for two padded matrices and two padded vectors; NULL when out of memory. */            \
    static T *scratch_##SUFFIX(int w, int *p) {                                                    \
        *p = (w + LANES_##SUFFIX - 1) / LANES_##SUFFIX * LANES_##SUFFIX;                           \
        return malloc(sizeof(T) * (2 * (size_t)*p * *p + 2 * (size_t)*p));                         \
    }                                                                                              \
                                                                                                   \
    int scalings_##SUFFIX(T *rows, const T *start, const T *right0, const T *right1,               \
                          const unsigned char *kinds, int steps, int b, int w) {                   \
        int p;                                                                                     \
        T *scratch = scratch_##SUFFIX(w, &p);                                                      \
        if (!scratch) return -1;                                                                   \
        T *mats[2] = {scratch, scratch + (size_t)p * p};                                           \
        T *x = mats[1] + (size_t)p * p, *out = x + p;                                              \
        for (int l = 0; l < b; l++) {                                                              \
            pad_##SUFFIX(right0 + (size_t)l * w * w, mats[0], w, p);                               \
            pad_##SUFFIX(right1 + (size_t)l * w * w, mats[1], w, p);                               \
            memcpy(x, start + (size_t)l * w, sizeof(T) * w);                                       \
            for (int h = 0; h < steps; h++) {                                                      \
                vecmat_##SUFFIX(x, mats[kinds[h]], out, w, p);                                     \
                for (int c = 0; c < p; c += LANES_##SUFFIX) {                                      \
                    vec_##SUFFIX inverse = 1 / load_##SUFFIX(out + c);                             \
                    memcpy(x + c, &inverse, sizeof inverse);                                       \
                }                                                                                  \
                memcpy(rows + ((size_t)h * b + l) * w, x, sizeof(T) * w);                          \
            }                                                                                      \
        }                                                                                          \
        free(scratch);                                                                             \
        return 0;                                                                                  \
    }                                                                                              \
                                                                                                   \
    int walk_back_##SUFFIX(T *rows, const T *m0, const T *m1, const unsigned char *kinds,          \
                           int steps, int b, int w) {                                              \
        int p;                                                                                     \
        T *scratch = scratch_##SUFFIX(w, &p);                                                      \
        if (!scratch) return -1;                                                                   \
        T *mats[2] = {scratch, scratch + (size_t)p * p};                                           \
        T *out = mats[1] + (size_t)p * p;                                                          \
        for (int l = 0; l < b; l++) {                                                              \
            pad_##SUFFIX(m0 + (size_t)l * w * w, mats[0], w, p);                                   \
            pad_##SUFFIX(m1 + (size_t)l * w * w, mats[1], w, p);                                   \
            for (int h = steps - 1; h >= 1; h--) {                                                 \
                const T *upper = rows + ((size_t)h * b + l) * w;                                   \
                T *lower = rows + ((size_t)(h - 1) * b + l) * w;                                   \
                vecmat_##SUFFIX(upper, mats[kinds[h]], out, w, p);                                 \
                for (int j = 0; j < w; j++) lower[j] *= out[j];                                    \
            }                                                                                      \
        }                                                                                          \
        free(scratch);                                                                             \
        return 0;                                                                                  \
    }

DEFINE_CHAIN(float, f32)
DEFINE_CHAIN(double, f64)
