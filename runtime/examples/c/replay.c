/* A plain C program on the C ABI (gov/gov.h): open a store's active version (or a policy
 * file), replay a trace instant by instant and print every decision as the JSON-lines stream
 * `gov simulate` prints. Usage:
 *   gov-example-c (--db STORE | --file POLICY.gov) --trace TRACE.json [--interp] */
#include <gov/gov.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* read_file(const char* path, size_t* length) {
  FILE* in = fopen(path, "rb");
  if (in == NULL) return NULL;
  size_t capacity = 1 << 16, size = 0;
  char* text = malloc(capacity);
  for (size_t n; text != NULL && (n = fread(text + size, 1, capacity - size, in)) > 0;) {
    size += n;
    if (size == capacity) {
      char* bigger = realloc(text, capacity *= 2);
      if (bigger == NULL) free(text);
      text = bigger;
    }
  }
  fclose(in);
  *length = size;
  return text;
}

static int fail(const char* what, gov_status status) {
  fprintf(stderr, "error: %s: %s (%s)\n", what, gov_last_error(), gov_status_name(status));
  return 1;
}

/* Prints a step's decisions and frees them. */
static void print_step(gov_decisions* step) {
  fputs(gov_decisions_json(step), stdout);
  gov_decisions_free(step);
}

int main(int argc, char** argv) {
  const char *db = NULL, *file = NULL, *trace_path = NULL;
  gov_open_options options;
  gov_open_options_init(&options);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) db = argv[++i];
    else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) file = argv[++i];
    else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) trace_path = argv[++i];
    else if (strcmp(argv[i], "--interp") == 0) options.back_end = GOV_BACK_END_INTERPRETER;
    else {
      trace_path = NULL; /* an unknown argument: print the usage */
      break;
    }
  }
  if (trace_path == NULL || (db == NULL) == (file == NULL)) {
    fprintf(stderr, "usage: gov-example-c (--db STORE | --file POLICY.gov) --trace TRACE.json [--interp]\n");
    return 2;
  }

  gov_engine* engine = NULL;
  gov_status status = db ? gov_engine_open(db, &options, &engine) : gov_engine_open_file(file, &options, &engine);
  if (status != GOV_OK) return fail("cannot open the policy", status);

  size_t length = 0;
  char* text = read_file(trace_path, &length);
  if (text == NULL) {
    fprintf(stderr, "error: cannot read `%s`\n", trace_path);
    gov_engine_close(engine);
    return 1;
  }
  gov_trace* trace = NULL;
  status = gov_trace_read(engine, text, length, &trace);
  free(text);
  if (status != GOV_OK) {
    gov_engine_close(engine);
    return fail("bad trace", status);
  }

  /* Events of one instant go to the engine together, as one step. */
  const size_t count = gov_trace_count(trace);
  gov_event* batch = malloc((count ? count : 1) * sizeof *batch);
  int result = batch == NULL;
  for (size_t i = 0; i < count && result == 0;) {
    const int64_t at = gov_trace_get(trace, i)->at_ms;
    size_t n = 0;
    for (; i < count && gov_trace_get(trace, i)->at_ms == at; ++i) batch[n++] = *gov_trace_get(trace, i);
    gov_decisions* step = NULL;
    status = gov_engine_step(engine, at, batch, n, &step);
    if (status != GOV_OK) result = fail("step", status);
    else print_step(step);
  }
  if (result == 0) {
    gov_decisions* step = NULL;
    status = gov_engine_tick(engine, GOV_TIME_FOREVER, &step); /* the durations still running */
    if (status != GOV_OK) result = fail("tick", status);
    else print_step(step);
  }
  free(batch);
  gov_trace_free(trace);
  gov_engine_close(engine);
  return result;
}
