/* Work-graph benchmark, taskdag implementation: td_crs_create + td_work_graph_create once
 * (untimed), then each execution is one td_work_graph_run on the root Threads space made by
 * td_initialize with --threads threads (1 thread: the single-worker path) and, if given,
 * --idle-spin-us as td_init_args.idle_spin_us. */
#include <taskdag.h>

#include <stdio.h>

#define IMPL_NAME "taskdag"
#define IMPL_MAX_THREADS 0
#include "work_graph_driver.h"

static td_space *g_space;
static td_work_graph *g_plan;

static void work(int64_t i, void *user) {
    (void)user;
    wg_work(i);
}

static int fail(const char *what, td_status s, char *err, size_t n) {
    snprintf(err, n, "%s: %s: %s", what, td_status_string((int)s), td_last_error_message());
    return 1;
}

static int impl_setup(const wg_problem *p, char *err, size_t n) {
    td_init_args init = TD_INIT_ARGS_INIT;
    td_crs *graph = NULL;
    td_status s;
    init.num_threads = p->threads;
    init.idle_spin_us = p->idle_spin_us; /* -1 = the default */
    if ((s = td_initialize(&init)) != TD_OK) return fail("td_initialize", s, err, n);
    if ((s = td_space_threads(&g_space)) != TD_OK) return fail("td_space_threads", s, err, n);
    if ((s = td_crs_create(p->n, p->row_map, p->nz, p->entries, &graph)) != TD_OK)
        return fail("td_crs_create", s, err, n);
    s = td_work_graph_create(graph, NULL, &g_plan);
    td_crs_release(graph);
    if (s != TD_OK) return fail("td_work_graph_create", s, err, n);
    return 0;
}

static int impl_run(char *err, size_t n) {
    td_status s = td_work_graph_run(g_plan, g_space, work, NULL);
    return s == TD_OK ? 0 : fail("td_work_graph_run", s, err, n);
}

static void impl_info(FILE *f) {
    size_t workers = 0;
    td_space_concurrency(g_space, &workers);
    fprintf(f, ",\"version\":");
    bench_json_string(f, td_version_string());
    fprintf(f, ",\"workers\":%zu", workers);
}

static void impl_teardown(void) {
    td_work_graph_release(g_plan);
    td_space_release(g_space);
    td_finalize();
}
