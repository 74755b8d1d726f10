/* Plain C reference loops for the sequential regret policies of banditkit on the Appendix H
 * instance of Esfandiari et al. (ICLR 2023): 6 Bernoulli arms (0.44, 0.47, ..., 0.59),
 * T = 45,000 pulls per trial. One trial at a time, scalar code, no vectorisation tricks: what
 * a C implementation of each policy does, as a speed reference for benchmarks/bench_sequential.py.
 *
 *   ucb1     mean + sqrt(2 ln t / n), every arm once first (Auer et al. 2002)
 *   klucb    Bernoulli KL-UCB, f(t) = log t (c = 0), index by the same 10 Newton steps from the
 *            same upper bound as banditkit.policies.index.kl_ucb (Garivier & Cappe 2011)
 *   klucbg   Gaussian KL-UCB, mean + sigma sqrt(2 f(t) / n), sigma = 1, c = 0
 *   ts       Beta(1,1)-Bernoulli Thompson sampling; Beta as G_a/(G_a+G_b), Gamma by
 *            Marsaglia & Tsang (2000) with retries, normals by the Marsaglia polar method
 *   tsg      Gaussian Thompson sampling N(S/(n+1), 1/(n+1)) (Agrawal & Goyal 2013)
 *   moss     mean + sqrt(max(log(T / (K n)), 0) / n), every arm once first (Audibert & Bubeck
 *            2009)
 *   bayesucb Beta(S+1, n-S+1) quantile of order 1 - 1/t (c = 0; Kaufmann et al. 2012): the
 *            regularised incomplete beta by its continued fraction (modified Lentz), inverted
 *            by at most 10 Halley steps from the Abramowitz & Stegun 26.5.22 start (the method
 *            of Numerical Recipes' invbetai), tolerance 1e-8 relative
 *   exp3ix   EXP3-IX, eta = 2 gamma = sqrt(2 log K / (K T)) (Neu 2015): weights
 *            exp(-eta (L - min L)), the arm by inversion of one uniform
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

#include "rng.h"
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

/* I_x(a, b) by the continued fraction of DLMF 8.17.22, evaluated by modified Lentz */
static double beta_cf(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + num * d; if (fabs(d) < tiny) d = tiny; d = 1.0 / d;
        c = 1.0 + num / c; if (fabs(c) < tiny) c = tiny;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + num * d; if (fabs(d) < tiny) d = tiny; d = 1.0 / d;
        c = 1.0 + num / c; if (fabs(c) < tiny) c = tiny;
        double step = d * c;
        h *= step;
        if (fabs(step - 1.0) < 1e-15) break;
    }
    return h;
}
static double beta_inc(double a, double b, double x, double lbeta) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    double front = exp(a * log(x) + b * log1p(-x) - lbeta);
    if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_cf(a, b, x) / a;
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}
static double beta_quantile(double p, double a, double b) {  /* a, b >= 1 */
    if (p <= 0) return 0;
    if (p >= 1) return 1;
    double lbeta = lgamma(a) + lgamma(b) - lgamma(a + b);
    double pp = p < 0.5 ? p : 1 - p, t = sqrt(-2 * log(pp));
    double z = (2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t;
    if (p < 0.5) z = -z;
    double lam = (z * z - 3) / 6, h = 2 / (1 / (2 * a - 1) + 1 / (2 * b - 1));
    double w = z * sqrt(lam + h) / h - (1 / (2 * b - 1) - 1 / (2 * a - 1)) * (lam + 5.0 / 6 - 2 / (3 * h));
    double x = a / (a + b * exp(2 * w));
    for (int j = 0; j < 10; j++) {
        if (x == 0 || x == 1) return x;
        double err = beta_inc(a, b, x, lbeta) - p;
        double dens = exp((a - 1) * log(x) + (b - 1) * log1p(-x) - lbeta);
        double u = err / dens, r = (a - 1) / x - (b - 1) / (1 - x);
        double step = u / (1 - 0.5 * fmin(1.0, u * r));
        x -= step;
        if (x <= 0) x = 0.5 * (x + step);
        if (x >= 1) x = 0.5 * (x + step + 1);
        if (fabs(step) < 1e-8 * x && j > 0) break;
    }
    return x;
}

static double run_exp3ix(void) {
    double L[K] = {0}, w[K], regret = 0, best = MU[K - 1];
    double eta = sqrt(2 * log((double)K) / ((double)K * T)), gamma = eta / 2;
    for (int t = 0; t < T; t++) {
        double low = L[0], total = 0;
        for (int k = 1; k < K; k++) if (L[k] < low) low = L[k];
        for (int k = 0; k < K; k++) { w[k] = exp(-eta * (L[k] - low)); total += w[k]; }
        double u = uniform(), cum = 0;
        int arm = K - 1;
        for (int k = 0; k < K; k++) { cum += w[k] / total; if (u < cum) { arm = k; break; } }
        double r = uniform() < MU[arm] ? 1.0 : 0.0;
        L[arm] += (1 - r) / (w[arm] / total + gamma);
        regret += best - MU[arm];
    }
    return regret;
}

static double run(int policy) {
    if (policy == 7) return run_exp3ix();
    double n[K] = {0}, sum[K] = {0}, regret = 0, best = MU[K - 1];
    for (int t = 0; t < T; t++) {
        int arm = 0;
        if ((policy <= 1 || policy == 4 || policy == 5) && t < K) {
            arm = t;
        } else {
            double top = -INFINITY;
            double lt = log((double)t);
            for (int k = 0; k < K; k++) {
                double score;
                if (policy == 0) score = sum[k] / n[k] + sqrt(2 * lt / n[k]);
                else if (policy == 1) score = klucb_index(sum[k] / n[k], n[k], lt);
                else if (policy == 4) score = sum[k] / n[k] + 1.0 * sqrt(2 * lt / n[k]);
                else if (policy == 5)
                    score = sum[k] / n[k] + sqrt(fmax(log(T / (K * n[k])), 0.0) / n[k]);
                else if (policy == 6)
                    score = beta_quantile(1.0 - 1.0 / (t + 1), sum[k] + 1, n[k] - sum[k] + 1);
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
    const char *names[8] = {"ucb1", "klucb", "ts", "tsg", "klucbg", "moss", "bayesucb",
                            "exp3ix"};
    for (int policy = 0; policy < 8; policy++) {
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
