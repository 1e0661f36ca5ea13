/* Views benchmark, taskdag implementation: two td_views of the benchmark's layouts,
 * td_view_deep_copy(dst, src). The copy runs on the threads of the process's CPU set. */
#define _GNU_SOURCE /* sched_setaffinity in views_driver.h; before any system header */
#include <taskdag.h>

#include <stdio.h>
#include <stddef.h>

#define IMPL_NAME "taskdag"
#define IMPL_MAX_THREADS 0
#include "views_driver.h"

static td_view *g_src, *g_dst;
static char *g_src_data, *g_dst_data;
static size_t g_src_strides[3], g_dst_strides[3];

static td_view *create(const views_params *p, int layout, const char *label, size_t *strides, char **data,
                       char *err, size_t n) {
    td_view_args args = TD_VIEW_ARGS_INIT;
    td_view *view = NULL;
    td_status s;
    int d;
    args.element_type = TD_ELEMENT_DOUBLE;
    args.rank = p->rank;
    for (d = 0; d < p->rank; ++d) args.extents[d] = p->extents[d];
    args.layout = layout == VIEWS_LEFT ? TD_LAYOUT_LEFT : TD_LAYOUT_RIGHT;
    args.label = label;
    s = td_view_create(&args, &view);
    if (s != TD_OK) {
        snprintf(err, n, "td_view_create: %s: %s", td_status_string((int)s), td_last_error_message());
        return NULL;
    }
    for (d = 0; d < p->rank; ++d) td_view_stride(view, d, &strides[d]);
    td_view_data(view, (void **)data);
    return view;
}

static int impl_setup(const views_params *p, char *err, size_t n) {
    td_init_args init = TD_INIT_ARGS_INIT;
    td_status s;
    init.num_threads = p->threads;
    s = td_initialize(&init);
    if (s != TD_OK) {
        snprintf(err, n, "td_initialize: %s: %s", td_status_string((int)s), td_last_error_message());
        return 1;
    }
    g_src = create(p, p->src_layout, "src", g_src_strides, &g_src_data, err, n);
    g_dst = g_src ? create(p, p->dst_layout, "dst", g_dst_strides, &g_dst_data, err, n) : NULL;
    return g_dst ? 0 : 1;
}

static double *element(char *data, const size_t *strides, const size_t *index) {
    size_t offset = index[0] * strides[0] + index[1] * strides[1];
    if (g_params.rank == 3) offset += index[2] * strides[2];
    return (double *)data + offset;
}

static double *impl_src(const size_t *index) { return element(g_src_data, g_src_strides, index); }
static double *impl_dst(const size_t *index) { return element(g_dst_data, g_dst_strides, index); }

static int impl_copy(char *err, size_t n) {
    td_status s = td_view_deep_copy(g_dst, g_src);
    if (s != TD_OK) {
        snprintf(err, n, "td_view_deep_copy: %s: %s", td_status_string((int)s), td_last_error_message());
        return 1;
    }
    return 0;
}

static void impl_info(FILE *f) {
    fprintf(f, ",\"version\":");
    bench_json_string(f, td_version_string());
}

static void impl_teardown(void) {
    td_view_release(g_dst);
    td_view_release(g_src);
    td_finalize();
}
