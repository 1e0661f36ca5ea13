/* Device views through the C API: a TD_SPACE_CUDA matrix filled from a host view of the other
 * layout, a column subview filled on the device, a host mirror read back, a pinned view, and
 * the errors (mismatched shapes, device out of memory). Without a GPU it checks that
 * TD_SPACE_CUDA is TD_ERROR_UNAVAILABLE with a reason and prints a skip line. */
#include <taskdag.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,      \
                    __LINE__, #cond, td_last_error_message());                           \
            ++failures;                                                                  \
        }                                                                                \
    } while (0)

static td_view *matrix(const char *label, size_t rows, size_t cols, td_layout layout,
                       td_memory_space space) {
    td_view_args args = TD_VIEW_ARGS_INIT;
    td_view *view = NULL;
    args.label = label;
    args.element_type = TD_ELEMENT_DOUBLE;
    args.rank = 2;
    args.extents[0] = rows;
    args.extents[1] = cols;
    args.layout = layout;
    args.memory_space = space;
    CHECK(td_view_create(&args, &view) == TD_OK);
    return view;
}

static double *at(td_view *view, int64_t i, int64_t j) {
    int64_t index[2] = {i, j};
    void *p = NULL;
    CHECK(td_view_ptr(view, index, &p) == TD_OK);
    return (double *)p;
}

int main(void) {
    enum { ROWS = 70, COLS = 45 };
    td_view_args args = TD_VIEW_ARGS_INIT;
    td_view *out = NULL, *host, *dev, *column, *mirror, *pinned, *wrong;
    td_memory_space space = TD_SPACE_HOST;
    double seven = 7.0;
    int64_t i, j;
    CHECK(td_initialize(NULL) == TD_OK);
    if (!td_cuda_available()) {
        args.label = "D";
        args.element_type = TD_ELEMENT_DOUBLE;
        args.rank = 1;
        args.extents[0] = 4;
        args.memory_space = TD_SPACE_CUDA;
        CHECK(td_view_create(&args, &out) == TD_ERROR_UNAVAILABLE);
        CHECK(strstr(td_last_error_message(), "view \"D\"") != NULL);
        CHECK(out == NULL);
        printf("view cuda: SKIPPED (%s)\n", td_last_error_message());
        td_finalize();
        return failures != 0;
    }
    host = matrix("host", ROWS, COLS, TD_LAYOUT_LEFT, TD_SPACE_HOST);
    for (i = 0; i < ROWS; ++i)
        for (j = 0; j < COLS; ++j) *at(host, i, j) = (double)(i * 1000 + j);
    dev = matrix("dev", ROWS, COLS, TD_LAYOUT_RIGHT, TD_SPACE_CUDA);
    CHECK(td_view_memory_space(dev, &space) == TD_OK && space == TD_SPACE_CUDA);
    CHECK(td_view_deep_copy(dev, host) == TD_OK);
    {
        td_slice slices[2] = {TD_ALL, TD_INDEX(4)};
        CHECK(td_view_subview(dev, slices, 2, &column) == TD_OK);
    }
    CHECK(td_view_fill(column, &seven) == TD_OK);
    CHECK(td_view_create_mirror_view(dev, &mirror) == TD_OK);
    CHECK(td_view_memory_space(mirror, &space) == TD_OK && space == TD_SPACE_HOST);
    CHECK(td_view_deep_copy(mirror, dev) == TD_OK);
    for (i = 0; i < ROWS; ++i)
        for (j = 0; j < COLS; ++j) CHECK(*at(mirror, i, j) == (j == 4 ? 7.0 : (double)(i * 1000 + j)));

    pinned = matrix("pinned", ROWS, COLS, TD_LAYOUT_LEFT, TD_SPACE_CUDA_HOST_PINNED);
    CHECK(td_view_deep_copy(pinned, dev) == TD_OK);
    CHECK(*at(pinned, ROWS - 1, 4) == 7.0 && *at(pinned, 3, 5) == 3005.0);

    wrong = matrix("wrong", ROWS, COLS + 1, TD_LAYOUT_RIGHT, TD_SPACE_HOST);
    CHECK(td_view_deep_copy(wrong, dev) == TD_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(td_last_error_message(), "extent(1)") != NULL);
    args.label = "huge";
    args.element_type = TD_ELEMENT_DOUBLE;
    args.rank = 1;
    args.extents[0] = (size_t)1 << 47;
    args.memory_space = TD_SPACE_CUDA;
    CHECK(td_view_create(&args, &out) == TD_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(td_last_error_message(), "view \"huge\"") != NULL);

    td_view_release(wrong);
    td_view_release(pinned);
    td_view_release(mirror);
    td_view_release(column);
    td_view_release(dev);
    td_view_release(host);
    td_finalize();
    if (failures == 0) printf("view cuda: all checks passed\n");
    return failures != 0;
}
