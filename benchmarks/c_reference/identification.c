/* Plain C reference loops for banditkit's registered K-armed fixed-confidence identifiers on
 * Garivier & Kaufmann's (COLT 2016, Section 6, Table 1) instance mu1 = (0.5, 0.45, 0.43, 0.4),
 * Bernoulli arms, delta = 0.1, each with the defaults of its registered factory
 * (banditkit.identification.named): the same sampling rule, the same stopping rule and
 * threshold, the same recommendation. One trial at a time, scalar code, K a compile-time
 * constant: what a C implementation of each identifier does, as the speed reference of
 * benchmarks/bench_k_armed_c.py, which also checks that each loop's mean sample count and error
 * rate agree with banditkit's within noise (the random streams differ, the algorithms do not).
 *
 *   tas     Track-and-Stop, D-tracking (GK16 eq. (9)-(10)): forced exploration of the least
 *           pulled arm while some N_a < sqrt(t) - K/2, else argmax t w*_a - N_a, w*(mu-hat)
 *           solved at every pull by oracle.optimal_weights' method (bisection on y, 52 halvings;
 *           x_a(y) by safeguarded Newton); Chernoff stop at log(2t(K-1)/delta) (Theorem 10)
 *   ttts    top-two Thompson sampling (Russo 2016), Beta(1, 1) prior, beta = 1/2: the leader is
 *           the argmax of one posterior draw; with probability 1/2 it is pulled, else posterior
 *           redraws until the argmax differs (at most 1,000), then the challenger from
 *           P(theta_j > theta_leader) under normal approximations; no first pull of each arm;
 *           the same Chernoff stop (0 while an arm is unpulled)
 *   ebtc    EB-TC eps0 (Jourdan, Degenne & Kaufmann 2023), eps0 = 0.1, beta = 1/2, sigma = 1/2:
 *           empirical-best leader, transportation-cost challenger, tracking per leader; the
 *           Gaussian Chernoff statistic, log(2t(K-1)/delta)
 *   lucb    LUCB1 (Kalyanakrishnan et al. 2012), beta(u, t) = sqrt(log(5/4 K t^4/delta)/(2u)):
 *           pull h_t and l_t each round until U_l - L_h < 0
 *   kllucb  KL-LUCB (Kaufmann & Kalyanakrishnan 2013), beta(t) = log(405.5 K t^1.1/delta), the
 *           Bernoulli KL bounds by 50 bisection halvings each (oracle.kl_bounds)
 *   bc      "best challenger" (GK16 Table 1, T-a-S (BC)): D-tracking's forced exploration, else
 *           the empirical best B or its Chernoff-closest challenger c, whichever term of Z_{B,c}
 *           grows the least per pull; Chernoff stop at log(2t(K-1)/delta)
 *   cracing Chernoff-Racing (GK16 Section 5): every remaining arm once per round, the worst
 *           eliminated when r (d(B, m) + d(W, m)) > log(2t(K-1)/delta), m = (B + W)/2
 *   klracing KL-Racing (Kaufmann & Kalyanakrishnan 2013): the worst eliminated when the best's
 *           lower KL bound exceeds its upper one at level log(405.5 K r^1.1/delta)
 *
 * Ties go to the lowest index everywhere, as in banditkit. Random numbers: xoshiro256**
 * (Blackman & Vigna), doubles from the top 53 bits; Beta draws as G_a/(G_a + G_b), Gamma by
 * Marsaglia & Tsang (2000), normals by the polar method. Output: one line per identifier:
 * name, trials, CPU ms per trial (CLOCK_PROCESS_CPUTIME_ID), mean pulls, standard deviation of
 * the pulls, wrong recommendations.
 *
 *   gcc -O2 -o identification identification.c -lm && ./identification [trials [name]]
 *   ./identification table NAME LEN FILE   (replay FILE's reward tables: see replay())
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define K 4
#ifndef MEANS /* -DMEANS=... for another instance of 4 arms, the first the best (the tests') */
#define MEANS 0.5, 0.45, 0.43, 0.4
#endif
static const double MU[K] = {MEANS};
static const double DELTA = 0.1;
#define BEST 0
#define CLIP 1e-15

#include "rng.h"
static inline double beta_draw(double a, double b) {
    double x = gamma_mt(a);
    return x / (x + gamma_mt(b));
}
/* Replay mode (`table`): arm a's k-th reward is TABLE[a * TABLE_LEN + k], so that a
 * deterministic identifier given the same rewards as banditkit must make the same decisions */
static const unsigned char *TABLE = NULL;
static long TABLE_LEN = 0, USED[K];
static inline int pull(int a) {
    if (TABLE) {
        if (USED[a] >= TABLE_LEN) { fprintf(stderr, "reward table too short\n"); exit(2); }
        return TABLE[a * TABLE_LEN + USED[a]++];
    }
    return uniform() < MU[a];
}

/* ---- what the identifiers share ------------------------------------------------------------ */

static double kl(double p, double q) {  /* Bernoulli kl, 0 log 0 = 0 (top_two._kl) */
    double out = 0;
    if (p > 0) out += p * log(p / q);
    if (p < 1) out += (1 - p) * log((1 - p) / (1 - q));
    return out;
}
static double divergence(double p, double q, int gaussian, double sigma) {  /* oracle's */
    if (gaussian) return (p - q) * (p - q) / (2 * sigma * sigma);
    if (q < CLIP) q = CLIP;
    if (q > 1 - CLIP) q = 1 - CLIP;
    return kl(p, q);
}
static int argmax(const double *x) {
    int b = 0;
    for (int a = 1; a < K; a++) if (x[a] > x[b]) b = a;
    return b;
}
static void means_of(const long *n, const double *sum, double *mu) {
    for (int a = 0; a < K; a++) mu[a] = n[a] > 0 ? sum[a] / n[a] : 0.0;
}
/* min_{j != best} Z_{best, j}, 0 while an arm is unpulled or the best is tied (chernoff_scalar) */
static double chernoff(const long *n, const double *sum, int gaussian, double sigma) {
    int best = 0;
    double top = -INFINITY;
    for (int a = 0; a < K; a++) {
        if (n[a] == 0) return 0.0;
        double m = sum[a] / n[a];
        if (m > top) { top = m; best = a; }
    }
    double nb = (double)n[best], z = INFINITY;
    for (int j = 0; j < K; j++) {
        if (j == best) continue;
        double nj = (double)n[j], mj = sum[j] / nj, zj;
        if (!(mj < top)) return 0.0;
        if (gaussian) {
            double d = top - mj;
            zj = d * d / (2 * sigma * sigma * (1 / nb + 1 / nj));
        } else {
            double m = (nb * top + nj * mj) / (nb + nj);
            zj = nb * kl(top, m) + nj * kl(mj, m);
        }
        if (zj < z) z = zj;
    }
    return z;
}
static inline double beta_theory(long t) { return log(2.0 * t * (K - 1) / DELTA); }
static void first_pulls(long *n, double *sum) {
    for (int a = 0; a < K; a++) { n[a] = 1; sum[a] = pull(a); }
}
static int forced_arm(const long *n, long t) {  /* D-tracking's: -1 when no arm is under */
    int arm = -1;
    double floor_ = sqrt((double)t) - K / 2.0;
    for (int a = 0; a < K; a++)
        if (n[a] < floor_ && (arm < 0 || n[a] < n[arm])) arm = a;
    return arm;
}

/* ---- w*(mu) (oracle.optimal_weights) ------------------------------------------------------- */

static double g_of(double x, double top, double mu) {
    double m = (top + x * mu) / (1 + x);
    return divergence(top, m, 0, 1) + x * divergence(mu, m, 0, 1);
}
static double x_of_y(double y, double top, double mu, double guess) {
    double lo = 0, hi = 1;
    while (g_of(hi, top, mu) < y && hi < 1e15) { lo = hi; hi *= 2; }
    double x = (lo < guess && guess < hi) ? guess : 0.5 * (lo + hi);
    for (int i = 0; i < 100; i++) {
        double m = (top + x * mu) / (1 + x);
        double gx = divergence(top, m, 0, 1) + x * divergence(mu, m, 0, 1) - y;
        if (gx > 0) hi = x; else lo = x;
        if (fabs(gx) <= 1e-13 * y || hi - lo <= 1e-13 * hi) break;
        double slope = divergence(mu, m, 0, 1);
        double step = slope > 0 ? x - gx / slope : lo - 1;
        if (fabs(step - x) <= 1e-14 * x) return step;
        x = (lo < step && step < hi) ? step : 0.5 * (lo + hi);
    }
    return x;
}
static double ratio_sum(double y, const double *mu, int best, double *xs) {
    double top = mu[best], total = 0;
    for (int a = 0; a < K; a++) {
        if (a == best) { xs[a] = 0; continue; }
        double x = x_of_y(y, top, mu[a], xs[a]);
        xs[a] = x;
        double m = (top + x * mu[a]) / (1 + x);
        total += divergence(top, m, 0, 1) / divergence(mu[a], m, 0, 1);
    }
    return total - 1;
}
static void optimal_weights(const double *mu, double *w) {
    int best = argmax(mu);
    double second = -INFINITY;
    for (int a = 0; a < K; a++) if (a != best && mu[a] > second) second = mu[a];
    double y_max = divergence(mu[best], second, 0, 1);
    if (!(second < mu[best]) || !(y_max > 0)) {
        for (int a = 0; a < K; a++) w[a] = 1.0 / K;
        return;
    }
    for (int a = 0; a < K; a++) w[a] = 1;
    double lo = 0, hi = y_max;
    for (int i = 0; i < 52; i++) {
        double mid = 0.5 * (lo + hi);
        if (ratio_sum(mid, mu, best, w) > 0) hi = mid; else lo = mid;
    }
    ratio_sum(0.5 * (lo + hi), mu, best, w);
    w[best] = 1;
    double total = 0;
    for (int a = 0; a < K; a++) total += w[a];
    for (int a = 0; a < K; a++) w[a] /= total;
}

/* ---- the identifiers: each returns the pulls of one trial and sets *rec -------------------- */

static long run_tas(int *rec) {
    long n[K]; double sum[K], mu[K], w[K];
    first_pulls(n, sum);
    long t = K;
    while (!(chernoff(n, sum, 0, 1) > beta_theory(t))) {
        means_of(n, sum, mu);
        optimal_weights(mu, w);
        int arm = forced_arm(n, t);
        if (arm < 0) {
            double top = -INFINITY;
            for (int a = 0; a < K; a++) {
                double v = t * w[a] - n[a];
                if (v > top) { top = v; arm = a; }
            }
        }
        n[arm]++; sum[arm] += pull(arm); t++;
    }
    means_of(n, sum, mu);
    *rec = argmax(mu);
    return t;
}

/* log Phi(x) (top_two.log_normal_cdf) */
static double log_normal_cdf(double x) {
    if (x > -30) return log(0.5 * erfc(-x / sqrt(2.0)));
    double y = 1 / (x * x);
    return -0.5 * x * x - log(-x) - 0.5 * log(2 * M_PI) + log(1 - y + 3 * y * y - 15 * y * y * y);
}
static int ttts_challenger(const long *n, const double *sum, int leader) {
    double theta[K];
    for (int r = 0; r < 1000; r++) {
        for (int a = 0; a < K; a++) theta[a] = beta_draw(sum[a] + 1, n[a] - sum[a] + 1);
        int j = argmax(theta);
        if (j != leader) return j;
    }
    /* the fallback: J ∝ P(theta_j > theta_leader), normal approximations of the posteriors */
    double m[K], v[K], lg[K], top = -INFINITY, total = 0;
    for (int a = 0; a < K; a++) {
        double al = sum[a] + 1, be = n[a] - sum[a] + 1, s2 = al + be;
        m[a] = al / s2; v[a] = al * be / (s2 * s2 * (s2 + 1));
    }
    for (int j = 0; j < K; j++) {
        if (j == leader) continue;
        lg[j] = log_normal_cdf((m[j] - m[leader]) / sqrt(v[j] + v[leader]));
        if (lg[j] > top) top = lg[j];
    }
    for (int j = 0; j < K; j++) if (j != leader) { lg[j] = exp(lg[j] - top); total += lg[j]; }
    double target = uniform() * total, acc = 0;
    int last = leader;
    for (int j = 0; j < K; j++) {
        if (j == leader) continue;
        acc += lg[j]; last = j;
        if (target < acc) return j;
    }
    return last;
}
static long run_ttts(int *rec) {
    long n[K] = {0}; double sum[K] = {0}, theta[K], mu[K];
    long t = 0;
    do {
        for (int a = 0; a < K; a++) theta[a] = beta_draw(sum[a] + 1, n[a] - sum[a] + 1);
        int arm = argmax(theta);
        if (!(uniform() < 0.5)) arm = ttts_challenger(n, sum, arm);
        n[arm]++; sum[arm] += pull(arm); t++;
    } while (!(chernoff(n, sum, 0, 1) > beta_theory(t)));
    means_of(n, sum, mu);
    *rec = argmax(mu);
    return t;
}

static long run_ebtc(int *rec) {
    const double eps0 = 0.1, beta = 0.5, sigma = 0.5;
    long n[K], rounds[K] = {0}, lead_pulls[K] = {0}; double sum[K], mu[K];
    first_pulls(n, sum);
    long t = K;
    while (!(chernoff(n, sum, 1, sigma) > beta_theory(t))) {
        means_of(n, sum, mu);
        int leader = argmax(mu), arm;
        rounds[leader]++;
        if (lead_pulls[leader] <= beta * rounds[leader]) {
            lead_pulls[leader]++;
            arm = leader;
        } else {
            double cost = INFINITY;
            arm = -1;
            for (int j = 0; j < K; j++) {
                if (j == leader) continue;
                double c = (mu[leader] - mu[j] + eps0) / sqrt(1.0 / n[leader] + 1.0 / n[j]);
                if (c < cost) { cost = c; arm = j; }
            }
        }
        n[arm]++; sum[arm] += pull(arm); t++;
    }
    means_of(n, sum, mu);
    *rec = argmax(mu);
    return t;
}

/* (L, U) with n d(mean, q) <= level, 50 halvings each side (oracle.kl_bounds) */
static void kl_bounds(double mean, long n, double level, double *lower, double *upper) {
    double p = mean < 0 ? 0 : (mean > 1 ? 1 : mean), lo = p, hi = 1;
    for (int i = 0; i < 50; i++) {
        double mid = 0.5 * (lo + hi);
        if (n * divergence(p, mid, 0, 1) <= level) lo = mid; else hi = mid;
    }
    *upper = lo;
    lo = 0; hi = p;
    for (int i = 0; i < 50; i++) {
        double mid = 0.5 * (lo + hi);
        if (n * divergence(p, mid, 0, 1) <= level) hi = mid; else lo = mid;
    }
    *lower = hi;
}
static long run_lucb(int *rec, int use_kl) {
    long n[K]; double sum[K], mu[K], lower[K], upper[K];
    first_pulls(n, sum);
    long t = K, r = 1;
    for (;;) {
        means_of(n, sum, mu);
        if (use_kl) {
            double level = log(405.5 * K * pow((double)r, 1.1) / DELTA);
            for (int a = 0; a < K; a++) kl_bounds(mu[a], n[a], level, &lower[a], &upper[a]);
        } else {
            double level = log(1.25 * K * pow((double)r, 4) / DELTA);
            for (int a = 0; a < K; a++) {
                double width = sqrt(level / (2.0 * n[a]));
                lower[a] = mu[a] - width; upper[a] = mu[a] + width;
            }
        }
        int h = argmax(mu), l = -1;
        double top = -INFINITY;
        for (int a = 0; a < K; a++) if (a != h && upper[a] > top) { top = upper[a]; l = a; }
        if (upper[l] - lower[h] < 0) { *rec = h; return t; }
        r++;
        n[h]++; sum[h] += pull(h);
        n[l]++; sum[l] += pull(l);
        t += 2;
    }
}

static long run_bc(int *rec) {
    long n[K]; double sum[K], mu[K];
    first_pulls(n, sum);
    long t = K;
    while (!(chernoff(n, sum, 0, 1) > beta_theory(t))) {
        int arm = forced_arm(n, t);
        if (arm < 0) {
            means_of(n, sum, mu);
            int best = argmax(mu), c = -1;
            double nb = (double)n[best], score = INFINITY, db_c = 0, dc_c = 0;
            for (int j = 0; j < K; j++) {
                if (j == best) continue;
                double nj = (double)n[j], m = (nb * mu[best] + nj * mu[j]) / (nb + nj);
                double db = (0 < m && m < 1) ? kl(mu[best], m) : 0;
                double dj = (0 < m && m < 1) ? kl(mu[j], m) : 0;
                double z = nb * db + nj * dj;
                if (z < score) { c = j; score = z; db_c = db; dc_c = dj; }
            }
            arm = db_c > dc_c ? best : c;
        }
        n[arm]++; sum[arm] += pull(arm); t++;
    }
    means_of(n, sum, mu);
    *rec = argmax(mu);
    return t;
}

static long run_racing(int *rec, int use_kl) {
    int active[K], m = K;
    double sum[K] = {0};
    for (int a = 0; a < K; a++) active[a] = a;
    long t = 0, r = 0;
    while (m > 1) {
        for (int i = 0; i < m; i++) sum[active[i]] += pull(active[i]);
        t += m; r++;
        int b = 0, w = 0;
        for (int i = 1; i < m; i++) {
            if (sum[active[i]] / r > sum[active[b]] / r) b = i;
            if (sum[active[i]] / r < sum[active[w]] / r) w = i;
        }
        if (b == w) continue;
        double top = sum[active[b]] / r, bottom = sum[active[w]] / r;
        int out;
        if (use_kl) {
            double level = log(405.5 * K * pow((double)r, 1.1) / DELTA), lo, hi, ignore;
            kl_bounds(top, r, level, &lo, &ignore);
            kl_bounds(bottom, r, level, &ignore, &hi);
            out = lo > hi;
        } else {
            double mid = 0.5 * (top + bottom);
            out = r * (divergence(top, mid, 0, 1) + divergence(bottom, mid, 0, 1))
                  > log(2.0 * t * (K - 1) / DELTA);
        }
        if (out) {
            for (int i = w; i < m - 1; i++) active[i] = active[i + 1];
            m--;
        }
    }
    *rec = active[0];
    return t;
}

static long run_kllucb(int *rec) { return run_lucb(rec, 1); }
static long run_lucb1(int *rec) { return run_lucb(rec, 0); }
static long run_cracing(int *rec) { return run_racing(rec, 0); }
static long run_klracing(int *rec) { return run_racing(rec, 1); }

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef long (*run_fn)(int *);
static const struct { const char *name; run_fn run; } ALGS[] = {
    {"tas", run_tas}, {"ttts", run_ttts}, {"ebtc", run_ebtc}, {"lucb", run_lucb1},
    {"kllucb", run_kllucb}, {"bc", run_bc}, {"cracing", run_cracing},
    {"klracing", run_klracing},
};

/* identification table NAME LEN FILE: FILE holds trials x K x LEN bytes of 0/1 rewards; one
 * line per trial: pulls, recommendation */
static int replay(const char *name, long len, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 2; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f), trials = size / (K * len);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(size);
    if (!data || fread(data, 1, size, f) != (size_t)size) { fclose(f); return 2; }
    fclose(f);
    TABLE_LEN = len;
    for (size_t i = 0; i < sizeof ALGS / sizeof ALGS[0]; i++) {
        if (strcmp(name, ALGS[i].name) != 0) continue;
        for (long k = 0; k < trials; k++) {
            TABLE = data + k * K * len;
            for (int a = 0; a < K; a++) USED[a] = 0;
            int rec;
            long pulls = ALGS[i].run(&rec);
            printf("%ld %d\n", pulls, rec);
        }
    }
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "table") == 0) return replay(argv[2], atol(argv[3]), argv[4]);
    int trials = argc > 1 ? atoi(argv[1]) : 100;
    for (size_t i = 0; i < sizeof ALGS / sizeof ALGS[0]; i++) {
        if (argc > 2 && strcmp(argv[2], ALGS[i].name) != 0) continue;
        seed(12345 + i);
        double total = 0, squares = 0;
        int errors = 0;
        double start = cpu_ms();
        for (int k = 0; k < trials; k++) {
            int rec;
            long pulls = ALGS[i].run(&rec);
            total += pulls; squares += (double)pulls * pulls;
            errors += rec != BEST;
        }
        double ms = (cpu_ms() - start) / trials, mean = total / trials;
        double var = trials > 1 ? (squares - trials * mean * mean) / (trials - 1) : 0;
        printf("%s %d %.6f %.3f %.3f %d\n", ALGS[i].name, trials, ms, mean,
               var > 0 ? sqrt(var) : 0, errors);
    }
    return 0;
}
