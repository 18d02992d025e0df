/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replay.c - runs a libFuzzer target over a corpus directory, for builds
 * without libFuzzer: every file of argv[1], in name order so that runs are
 * reproducible, goes through LLVMFuzzerTestOneInput() once. A failing input
 * aborts the process (the targets abort on any violated invariant), so the
 * last "running" line names it. An empty or missing corpus is an error: a
 * test that replays nothing cannot fail.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int skip_hidden(const struct dirent *e)
{
  return e->d_name[0] != '.';
}

/* Reads a whole file into a buffer of exactly its size (so that ASan catches
 * a read past the end). Returns 0 or -errno. */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return -errno;
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 4096;
      uint8_t *p = realloc(buf, cap);
      if (!p) {
        free(buf);
        fclose(f);
        return -ENOMEM;
      }
      buf = p;
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0)
      break;
  }
  int err = ferror(f) ? -EIO : 0;
  fclose(f);
  if (err) {
    free(buf);
    return err;
  }
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact) {
    free(buf);
    return -ENOMEM;
  }
  memcpy(exact, buf, n);
  free(buf);
  *out = exact;
  *len = n;
  return 0;
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  struct dirent **names;
  int n = scandir(argv[1], &names, skip_hidden, alphasort);
  if (n < 0) {
    fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
    return 1;
  }

  int passed = 0, failed = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]->d_name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(names[i]);
      continue;
    }
    uint8_t *data = NULL;
    size_t len = 0;
    int err = read_file(path, &data, &len);
    if (err) {
      fprintf(stderr, "%s: %s\n", path, strerror(-err));
      failed++;
    } else {
      printf("running %s (%zu bytes)\n", names[i]->d_name, len);
      fflush(stdout);
      LLVMFuzzerTestOneInput(data, len);
      free(data);
      passed++;
    }
    free(names[i]);
  }
  free(names);

  printf("%d passed, %d failed\n", passed, failed);
  if (passed + failed == 0) {
    fprintf(stderr, "%s: no inputs\n", argv[1]);
    return 1;
  }
  return failed ? 1 : 0;
}
