/*
 * hello.c: start the taskdag runtime, describe it, stop it.
 *
 * Shows the C API's conventions: every fallible call returns a td_status (TD_OK == 0), and
 * td_last_error_message() tells what went wrong on this thread.
 */
#include <stdio.h>
#include <stdlib.h>

#include "taskdag.h"

/* Prints the failed call with taskdag's explanation and exits with a nonzero status. */
static void check(td_status status, const char *call) {
  if (status != TD_OK) {
    fprintf(stderr, "%s failed with %s: %s\n", call, td_status_string(status),
            td_last_error_message());
    exit(EXIT_FAILURE);
  }
}

int main(void) {
  printf("taskdag %s (header %d.%d.%d)\n", td_version_string(), TD_VERSION_MAJOR,
         TD_VERSION_MINOR, TD_VERSION_PATCH);

  /* Defaults: all cores, the first GPU if there is one. */
  td_init_args args = TD_INIT_ARGS_INIT;
  /* Idle workers spin this long (microseconds) waiting for the next dispatch before they
   * sleep; -1 keeps the default. A program that dispatches in bursts far apart can use less. */
  args.idle_spin_us = 1000;
  check(td_initialize(&args), "td_initialize");

  /* The configuration string belongs to us and goes back through td_string_free. */
  char *configuration = NULL;
  check(td_configuration_string(&configuration), "td_configuration_string");
  printf("%s", configuration);
  td_string_free(configuration);

  check(td_finalize(), "td_finalize");
  printf("hello.c: done\n");
  return EXIT_SUCCESS;
}
