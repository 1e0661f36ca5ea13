/* Work-graph benchmark, level-synchronous baseline (the bulk approach of TREES, 001): items are
 * grouped once (untimed) into topological levels, level l holding the items whose longest path
 * from a root has l edges, so every item's inputs are in earlier levels. An execution runs the
 * levels in order, each as an OpenMP `for` over its items, with the loop's barrier between
 * levels. */
#include <omp.h>

#include <stdio.h>

#define IMPL_NAME "levels"
#define IMPL_MAX_THREADS 0
#include "work_graph_driver.h"

static int64_t *g_items;       /* items level by level */
static int64_t *g_level_start; /* level l is g_items[g_level_start[l] .. g_level_start[l+1]) */
static int64_t g_levels;

static int impl_setup(const wg_problem *p, char *err, size_t n) {
    int64_t i, k, head = 0, tail = 0, l;
    int64_t *indegree = (int64_t *)wg_alloc((size_t)p->n, sizeof(int64_t));
    int64_t *level = (int64_t *)wg_alloc((size_t)p->n, sizeof(int64_t));
    int64_t *queue = (int64_t *)wg_alloc((size_t)p->n, sizeof(int64_t));
    (void)err, (void)n;
    for (k = 0; k < p->nz; ++k) indegree[p->entries[k]]++;
    for (i = 0; i < p->n; ++i)
        if (indegree[i] == 0) queue[tail++] = i;
    g_levels = p->n > 0 ? 1 : 0;
    while (head < tail) {
        i = queue[head++];
        for (k = p->row_map[i]; k < p->row_map[i + 1]; ++k) {
            int64_t j = p->entries[k];
            if (level[j] < level[i] + 1) level[j] = level[i] + 1;
            if (level[j] + 1 > g_levels) g_levels = level[j] + 1;
            if (--indegree[j] == 0) queue[tail++] = j;
        }
    }
    g_level_start = (int64_t *)wg_alloc((size_t)g_levels + 1, sizeof(int64_t));
    g_items = (int64_t *)wg_alloc((size_t)p->n, sizeof(int64_t));
    for (i = 0; i < p->n; ++i) g_level_start[level[i] + 1]++;
    for (l = 0; l < g_levels; ++l) g_level_start[l + 1] += g_level_start[l];
    memcpy(queue, g_level_start, (size_t)g_levels * sizeof(int64_t));
    for (i = 0; i < p->n; ++i) g_items[queue[level[i]]++] = i;
    free(indegree);
    free(level);
    free(queue);
    omp_set_num_threads(p->threads);
    return 0;
}

static int impl_run(char *err, size_t n) {
    (void)err, (void)n;
#pragma omp parallel
    {
        int64_t l, k;
        for (l = 0; l < g_levels; ++l) {
#pragma omp for schedule(static)
            for (k = g_level_start[l]; k < g_level_start[l + 1]; ++k) wg_work(g_items[k]);
        }
    }
    return 0;
}

static void impl_info(FILE *f) { fprintf(f, ",\"version\":\"GCC OpenMP %d\",\"levels\":%lld", _OPENMP, (long long)g_levels); }

static void impl_teardown(void) {
    free(g_items);
    free(g_level_start);
}
