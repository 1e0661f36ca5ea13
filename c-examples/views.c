/*
 * views.c: multidimensional arrays with views.
 *
 * Allocates a labelled 2-D array in C order (LayoutRight), fills it on all threads with
 * td_parallel_for, takes a row and a column as
 * subviews, copies it into a Fortran-order (LayoutLeft) array with deep_copy (which permutes the
 * elements), makes a host mirror, grows it with resize, wraps a plain C array, and shows how a
 * bad index is reported. Exits nonzero if anything is not as expected.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "taskdag.h"

enum { ROWS = 4, COLS = 6 };

static void check(td_status status, const char *call) {
  if (status != TD_OK) {
    fprintf(stderr, "%s failed with %s: %s\n", call, td_status_string(status),
            td_last_error_message());
    exit(EXIT_FAILURE);
  }
}

/* The double at (i, j) of a rank-2 view, through the bounds-checked element address. */
static double at(const td_view *view, int64_t i, int64_t j) {
  const int64_t index[2] = {i, j};
  void *p = NULL;
  check(td_view_ptr(view, index, &p), "td_view_ptr");
  return *(double *)p;
}

static td_view *create(const char *label, td_layout layout, size_t rows, size_t cols) {
  td_view_args args = TD_VIEW_ARGS_INIT;
  td_view *view = NULL;
  args.element_type = TD_ELEMENT_DOUBLE;
  args.rank = 2;
  args.extents[0] = rows;
  args.extents[1] = cols;
  args.layout = layout;
  args.label = label;
  check(td_view_create(&args, &view), "td_view_create");
  return view;
}

/* What the fill loop needs: where the array is and how to step through it. */
struct fill_args {
  double *data;
  size_t s0, s1;
};

/* One thread's share of the rows: element (i, j) = 10 i + j. */
static void fill_rows(int64_t begin, int64_t end, void *user) {
  const struct fill_args *a = user;
  for (int64_t i = begin; i < end; ++i)
    for (size_t j = 0; j < COLS; ++j) a->data[(size_t)i * a->s0 + j * a->s1] = (double)(10 * i + j);
}

static void print_strides(const td_view *view) {
  const char *label = NULL;
  size_t s0 = 0, s1 = 0;
  check(td_view_label(view, &label), "td_view_label");
  check(td_view_stride(view, 0, &s0), "td_view_stride");
  check(td_view_stride(view, 1, &s1), "td_view_stride");
  printf("%s: strides (%zu, %zu)\n", label, s0, s1);
}

int main(void) {
  check(td_initialize(NULL), "td_initialize");

  /* A 4 x 6 array in C order, filled through its strides on the Threads space, rows split
     between threads: element (i, j) is at data + i * stride(0) + j * stride(1). */
  td_view *temperature = create("temperature", TD_LAYOUT_RIGHT, ROWS, COLS);
  void *address = NULL;
  struct fill_args fill = {NULL, 0, 0};
  check(td_view_data(temperature, &address), "td_view_data");
  fill.data = address;
  check(td_view_stride(temperature, 0, &fill.s0), "td_view_stride");
  check(td_view_stride(temperature, 1, &fill.s1), "td_view_stride");
  td_space *threads = NULL;
  check(td_space_threads(&threads), "td_space_threads");
  td_range_policy rows = TD_RANGE_POLICY_INIT;
  rows.end = ROWS;
  check(td_parallel_for(threads, &rows, fill_rows, &fill), "td_parallel_for");
  check(td_space_release(threads), "td_space_release");
  print_strides(temperature);

  /* Row 2 and column 3 as subviews: they share the memory, so no copy is made. */
  const td_slice row_2[2] = {TD_INDEX(2), TD_ALL};
  const td_slice column_3[2] = {TD_ALL, TD_INDEX(3)};
  td_view *row = NULL, *column = NULL;
  check(td_view_subview(temperature, row_2, 2, &row), "td_view_subview");
  check(td_view_subview(temperature, column_3, 2, &column), "td_view_subview");
  printf("row 2:");
  for (int64_t j = 0; j < COLS; ++j) {
    void *p = NULL;
    check(td_view_ptr(row, &j, &p), "td_view_ptr");
    printf(" %g", *(double *)p);
  }
  td_layout layout = 0;
  size_t column_stride = 0;
  check(td_view_layout(column, &layout), "td_view_layout");
  check(td_view_stride(column, 0, &column_stride), "td_view_stride");
  printf("\ncolumn 3 (%s, stride %zu):", layout == TD_LAYOUT_STRIDE ? "TD_LAYOUT_STRIDE" : "?",
         column_stride);
  for (int64_t i = 0; i < ROWS; ++i) {
    void *p = NULL;
    check(td_view_ptr(column, &i, &p), "td_view_ptr");
    printf(" %g", *(double *)p);
  }
  printf("\n");

  /* deep_copy into Fortran order permutes the elements; every (i, j) keeps its value. */
  td_view *left = create("temperature_left", TD_LAYOUT_LEFT, ROWS, COLS);
  check(td_view_deep_copy(left, temperature), "td_view_deep_copy");
  print_strides(left);
  int matches = 0;
  for (int64_t i = 0; i < ROWS; ++i)
    for (int64_t j = 0; j < COLS; ++j) matches += at(left, i, j) == at(temperature, i, j);
  printf("deep_copy LayoutRight -> LayoutLeft: %d of %d elements match\n", matches, ROWS * COLS);

  /* A mirror is a new host array of the same shape and layout; a mirror view of host memory
     is the view itself. */
  td_view *mirror = NULL, *mirror_view = NULL;
  check(td_view_create_mirror(left, &mirror), "td_view_create_mirror");
  check(td_view_create_mirror_view(left, &mirror_view), "td_view_create_mirror_view");
  check(td_view_deep_copy(mirror, left), "td_view_deep_copy");
  const char *mirror_label = NULL;
  void *left_data = NULL, *mirror_view_data = NULL;
  check(td_view_label(mirror, &mirror_label), "td_view_label");
  check(td_view_data(left, &left_data), "td_view_data");
  check(td_view_data(mirror_view, &mirror_view_data), "td_view_data");
  printf("mirror \"%s\": (3, 5) = %g; mirror view shares memory: %s\n", mirror_label,
         at(mirror, 3, 5), left_data == mirror_view_data ? "yes" : "no");

  /* resize keeps the elements both shapes share and zero-fills the rest. */
  const size_t bigger[2] = {ROWS + 1, COLS + 2};
  check(td_view_resize(&left, bigger, 2), "td_view_resize");
  printf("resized to %dx%d: (3, 5) = %g, (4, 7) = %g\n", ROWS + 1, COLS + 2, at(left, 3, 5),
         at(left, 4, 7));

  /* A plain C array as an unmanaged view: nothing is copied and taskdag never frees it. */
  double plain[3][2] = {{1, 2}, {3, 4}, {5, 6}};
  td_view_args args = TD_VIEW_ARGS_INIT;
  td_view *wrapped = NULL;
  args.element_type = TD_ELEMENT_DOUBLE;
  args.rank = 2;
  args.extents[0] = 3;
  args.extents[1] = 2;
  args.label = "plain";
  check(td_view_wrap(&args, plain, &wrapped), "td_view_wrap");
  const double half = 0.5;
  check(td_view_fill(wrapped, &half), "td_view_fill");
  printf("wrapped C array after fill: plain[2][1] = %g\n", plain[2][1]);

  /* A bad index is reported with the view's label and the dimension. */
  const int64_t outside[2] = {1, COLS};
  void *p = NULL;
  td_status status = td_view_ptr(temperature, outside, &p);
  printf("index (1, %d): %s: %s\n", COLS, td_status_string(status), td_last_error_message());

  td_view_release(wrapped);
  td_view_release(mirror_view);
  td_view_release(mirror);
  td_view_release(left);
  td_view_release(column);
  td_view_release(row);
  td_view_release(temperature);
  check(td_finalize(), "td_finalize");
  if (matches != ROWS * COLS || plain[2][1] != 0.5 || status != TD_ERROR_INVALID_ARGUMENT) {
    fprintf(stderr, "views.c: unexpected results\n");
    return EXIT_FAILURE;
  }
  printf("views.c: done\n");
  return 0;
}
