/* Plain C reference loops for the sequential regret policies of banditkit on the Appendix H
 * instance of Esfandiari et al. (ICLR 2023): 6 Bernoulli arms (0.44, 0.47, ..., 0.59),
 * T = 45,000 pulls per trial. One trial at a time, scalar code, no vectorisation tricks: what
 * a C implementation of each policy does, as a speed reference for benchmarks/bench_sequential.py.
 *
 *   ucb1     mean + sqrt(2 ln t / n), every arm once first (Auer et al. 2002)
 *   klucb    Bernoulli KL-UCB, f(t) = log t (c = 0), index by the same 10 Newton steps from the
 *            same upper bound as banditkit.policies.kl_ucb (Garivier & Cappe 2011)
 *   klucbg   Gaussian KL-UCB, mean + sigma sqrt(2 f(t) / n), sigma = 1, c = 0
 *   ts       Beta(1,1)-Bernoulli Thompson sampling; Beta as G_a/(G_a+G_b), Gamma by
 *            Marsaglia & Tsang (2000) with retries, normals by the Marsaglia polar method
 *   tsg      Gaussian Thompson sampling N(S/(n+1), 1/(n+1)) (Agrawal & Goyal 2013)
 *
 * Random numbers: xoshiro256** (Blackman & Vigna), doubles from the top 53 bits. Output: one
 * line per policy: name, trials, CPU ms per trial, mean final pseudo-regret.
 *
 *   gcc -O2 -o sequential sequential.c -lm && ./sequential [trials]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define K 6
#define T 45000
static const double MU[K] = {0.44, 0.47, 0.50, 0.53, 0.56, 0.59};

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
static double klucb_index(double p, double n, double level) {
    double b = level / n, plogp = p > 0 ? p * log(p) : 0;
    double ne = plogp + (p < 1 ? (1 - p) * log1p(-p) : 0);
    double tail = p < 1 ? 1 - (1 - p) * exp(-(b - plogp) / (1 - p)) : 1;
    double q = p + sqrt(b / 2);
    if (tail < q) q = tail;
    if (q > 1 - 0x1.0p-53) q = 1 - 0x1.0p-53;
    for (int i = 0; i < 10; i++) {
        double f = ne - p * log(q) - (1 - p) * log1p(-q) - b;
        if (f <= 0) break;  /* at the root: later steps would keep q */
        double q2 = q - f / ((q - p) / (q * (1 - q)));
        if (q2 < q) q = q2;
    }
    return q;
}

static double run(int policy) {
    double n[K] = {0}, sum[K] = {0}, regret = 0, best = MU[K - 1];
    for (int t = 0; t < T; t++) {
        int arm = 0;
        if ((policy <= 1 || policy == 4) && t < K) {
            arm = t;
        } else {
            double top = -INFINITY;
            double lt = log((double)t);
            for (int k = 0; k < K; k++) {
                double score;
                if (policy == 0) score = sum[k] / n[k] + sqrt(2 * lt / n[k]);
                else if (policy == 1) score = klucb_index(sum[k] / n[k], n[k], lt);
                else if (policy == 4) score = sum[k] / n[k] + 1.0 * sqrt(2 * lt / n[k]);
                else if (policy == 2) {
                    double ga = gamma_mt(sum[k] + 1), gb = gamma_mt(n[k] - sum[k] + 1);
                    score = ga / (ga + gb);
                } else score = sum[k] / (n[k] + 1) + normal() / sqrt(n[k] + 1);
                if (score > top) { top = score; arm = k; }
            }
        }
        double r = uniform() < MU[arm] ? 1.0 : 0.0;
        n[arm] += 1; sum[arm] += r; regret += best - MU[arm];
    }
    return regret;
}

int main(int argc, char **argv) {
    int trials = argc > 1 ? atoi(argv[1]) : 200;
    const char *names[5] = {"ucb1", "klucb", "ts", "tsg", "klucbg"};
    for (int policy = 0; policy < 5; policy++) {
        struct timespec a, b;
        double total = 0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (int i = 0; i < trials; i++) { seed(1000 * policy + i); total += run(policy); }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        double ms = ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6) / trials;
        printf("%s %d %.4f %.2f\n", names[policy], trials, ms, total / trials);
    }
    return 0;
}
