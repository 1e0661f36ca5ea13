/* A C program linked to the installed static library (taskdag::taskdag_static). */
#include <stdio.h>
#include <stdlib.h>

#include <taskdag.h>

int main(void) {
  if (td_initialize(NULL) != TD_OK) {
    fprintf(stderr, "td_initialize: %s\n", td_last_error_message());
    return EXIT_FAILURE;
  }
  td_pool_args args = TD_POOL_ARGS_INIT;
  args.min_total_alloc_size = 1 << 16;
  td_pool *pool = NULL;
  if (td_pool_create(&args, &pool) != TD_OK) {
    fprintf(stderr, "td_pool_create: %s\n", td_last_error_message());
    return EXIT_FAILURE;
  }
  void *block = td_pool_allocate(pool, 100, 1);
  int ok = block != NULL && td_pool_deallocate(pool, block, 100) == TD_OK;
  td_pool_release(pool);
  td_finalize();
  if (!ok) {
    fprintf(stderr, "allocation failed: %s\n", td_last_error_message());
    return EXIT_FAILURE;
  }
  printf("consumer app_static: taskdag %s static: OK\n", td_version_string());
  return EXIT_SUCCESS;
}
