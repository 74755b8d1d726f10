/* The C references' random numbers (included by sequential.c and identification.c): xoshiro256**
 * seeded by splitmix64, uniforms on [0, 1), polar-method normals and Marsaglia-Tsang gammas.
 * They need not equal numpy's: the references compare speed, and agree with banditkit within
 * noise. */
#ifndef BANDITKIT_C_REFERENCE_RNG_H
#define BANDITKIT_C_REFERENCE_RNG_H
#include <math.h>
#include <stdint.h>

static uint64_t s[4];
static inline uint64_t rotl(const uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static uint64_t next(void) {
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return result;
}
static inline double uniform(void) { return (next() >> 11) * 0x1.0p-53; }
static void seed(uint64_t x) {
    for (int i = 0; i < 4; i++) {  /* splitmix64 */
        uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        s[i] = z ^ (z >> 31);
    }
}
static double normal(void) {
    static int have = 0;
    static double spare;
    if (have) { have = 0; return spare; }
    double u, v, r;
    do { u = 2 * uniform() - 1; v = 2 * uniform() - 1; r = u * u + v * v; } while (r >= 1 || r == 0);
    double f = sqrt(-2 * log(r) / r);
    spare = v * f; have = 1;
    return u * f;
}
static double gamma_mt(double a) {  /* a >= 1 */
    double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9 * d);
    for (;;) {
        double x = normal(), v = 1 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        double u = uniform();
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
    }
}

#endif
