/*
 * bench_util.h: helpers shared by every taskdag benchmark program (C and C++).
 *
 * The protocol between a benchmark program and bench/run.py (see docs/PERFORMANCE.md):
 *   - command line: --threads N --reps R --warmup W plus benchmark-specific options; --help
 *     prints usage and exits 0 (run.py loads each packed program that way to probe it);
 *   - stdout: one JSON object per line. {"type":"measurement", ...} for each timed repetition
 *     (warm-up repetitions carry "warmup":true), {"type":"info", ...} for descriptive fields and a
 *     final {"type":"done","valid":true} once every result was checked;
 *   - exit status 0 only when every result was checked and correct. A wrong answer prints
 *     {"type":"error","message":...} and exits 1; an unsupported configuration exits 2.
 *   Anything else (diagnostics) goes to stderr.
 */
#ifndef TASKDAG_BENCH_UTIL_H
#define TASKDAG_BENCH_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_EXIT_WRONG 1
#define BENCH_EXIT_UNSUPPORTED 2

static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64 (Marsaglia): fixed seeds give identical sequences in every implementation. */
static inline uint64_t bench_xorshift64(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* Seed for thread `tid` of a run with base seed `seed`; never zero. */
static inline uint64_t bench_thread_seed(uint64_t seed, int tid) {
    uint64_t s = seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(tid + 1));
    return s ? s : 0x2545F4914F6CDD1Dull;
}

/* Writes `s` as a JSON string literal (with quotes) to `f`. */
static inline void bench_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

/* Prints {"type":"error","message":...} on stdout, the message on stderr, and exits with `code`. */
static inline void bench_die(int code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    printf("{\"type\":\"error\",\"exit\":%d,\"message\":", code);
    bench_json_string(stdout, msg);
    printf("}\n");
    fflush(stdout);
    fprintf(stderr, "error: %s\n", msg);
    exit(code);
}

/* Parses a non-negative integer option value or dies with a usage message. */
static inline long long bench_parse_int(const char *opt, const char *value) {
    char *end = NULL;
    long long v;
    if (!value) bench_die(BENCH_EXIT_UNSUPPORTED, "option %s needs a value", opt);
    v = strtoll(value, &end, 0);
    if (!end || *end != '\0' || v < 0)
        bench_die(BENCH_EXIT_UNSUPPORTED, "option %s: '%s' is not a non-negative integer", opt, value);
    return v;
}

/* MiB of this process's anonymous memory backed by transparent huge pages (AnonHugePages of
 * /proc/self/smaps_rollup), or -1 where that file is missing. */
static inline long bench_anon_huge_mib(void) {
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

#endif /* TASKDAG_BENCH_UTIL_H */
