/* Views benchmark, memcpy peer: the same bytes copied with memcpy, split into one contiguous
 * piece per thread (the bandwidth a copy can reach; the destination keeps the source's layout). */
#define _GNU_SOURCE /* sched_setaffinity in views_driver.h; before any system header */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMPL_NAME "memcpy"
#define IMPL_MAX_THREADS 0
#define IMPL_DST_LAYOUT(p) ((p)->src_layout) /* the bytes copied as they are */
#include "views_driver.h"

typedef struct piece {
    pthread_t handle;
    size_t begin, end; /* bytes */
} piece;

static double *g_src, *g_dst;
static piece *g_pieces;
static pthread_barrier_t g_start, g_end;
static int g_stop;

static void *worker(void *arg) {
    piece *pc = (piece *)arg;
    for (;;) {
        pthread_barrier_wait(&g_start);
        if (__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE)) return NULL;
        memcpy((char *)g_dst + pc->begin, (const char *)g_src + pc->begin, pc->end - pc->begin);
        pthread_barrier_wait(&g_end);
    }
}

static int impl_setup(const views_params *p, char *err, size_t n) {
    const size_t bytes = p->elements * sizeof(double);
    int t;
    g_src = (double *)aligned_alloc(64, (bytes + 63) / 64 * 64);
    g_dst = (double *)aligned_alloc(64, (bytes + 63) / 64 * 64);
    g_pieces = (piece *)calloc((size_t)p->threads, sizeof *g_pieces);
    if (!g_src || !g_dst || !g_pieces) {
        snprintf(err, n, "out of memory");
        return 1;
    }
    pthread_barrier_init(&g_start, NULL, (unsigned)p->threads);
    pthread_barrier_init(&g_end, NULL, (unsigned)p->threads);
    for (t = 0; t < p->threads; ++t) {
        g_pieces[t].begin = bytes / (size_t)p->threads * (size_t)t / 64 * 64;
        g_pieces[t].end = t + 1 == p->threads ? bytes : bytes / (size_t)p->threads * (size_t)(t + 1) / 64 * 64;
        if (t > 0 && pthread_create(&g_pieces[t].handle, NULL, worker, &g_pieces[t]) != 0) {
            snprintf(err, n, "pthread_create failed");
            return 1;
        }
    }
    return 0;
}

static double *impl_src(const size_t *index) { return g_src + views_offset(&g_params, g_params.src_layout, index); }
static double *impl_dst(const size_t *index) { return g_dst + views_offset(&g_params, g_params.src_layout, index); }

static int impl_copy(char *err, size_t n) {
    piece *own = &g_pieces[0];
    (void)err, (void)n;
    pthread_barrier_wait(&g_start);
    memcpy((char *)g_dst + own->begin, (const char *)g_src + own->begin, own->end - own->begin);
    pthread_barrier_wait(&g_end);
    return 0;
}

static void impl_info(FILE *f) { fprintf(f, ",\"version\":\"glibc memcpy\""); }

static void impl_teardown(void) {
    int t;
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
    pthread_barrier_wait(&g_start);
    for (t = 1; t < g_params.threads; ++t) pthread_join(g_pieces[t].handle, NULL);
    free(g_src);
    free(g_dst);
    free(g_pieces);
}
