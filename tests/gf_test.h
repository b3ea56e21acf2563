/* Minimal test framework for gpufeed's C tests.
   A test is a function; RUN(fn) counts it as passed when none of its CHECKs
   failed. TEST_SUMMARY() prints "N passed, N failed" and returns the exit
   code. Test programs only: this file keeps counters in globals. */
#ifndef GF_TEST_H
#define GF_TEST_H
#include <stdio.h>
#include <string.h>

static int gf_t_pass, gf_t_fail, gf_t_bad;
static const char *gf_t_current = "";

#define CHECK(c) do { if (!(c)) { gf_t_bad++; \
    fprintf(stderr, "  check failed in %s (%s:%d): %s\n", gf_t_current, __FILE__, __LINE__, #c); } } while (0)
#define CHECK_MSG(c, ...) do { if (!(c)) { gf_t_bad++; \
    fprintf(stderr, "  check failed in %s (%s:%d): %s: ", gf_t_current, __FILE__, __LINE__, #c); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
/* the error message mentions `needle` */
#define CHECK_HAS(msg, needle) CHECK_MSG(strstr((msg), (needle)) != NULL, "message \"%s\" lacks \"%s\"", (msg), (needle))

#define RUN(fn) do { int gf_t_before = gf_t_bad; gf_t_current = #fn; fn(); \
    if (gf_t_bad == gf_t_before) { gf_t_pass++; printf("PASS %s\n", #fn); } \
    else { gf_t_fail++; printf("FAIL %s\n", #fn); } } while (0)

#define TEST_SUMMARY() (printf("%d passed, %d failed\n", gf_t_pass, gf_t_fail), gf_t_fail ? 1 : 0)
#endif
