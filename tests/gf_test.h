/* Minimal test framework for gpufeed's C tests.
   A test is a function; RUN(fn) counts it as passed when none of its CHECKs
   failed. TEST_SUMMARY() prints "N passed, N failed" and returns the exit
   code. Test programs only: this file keeps counters in globals.

   Environment (tests/run.sh uses them so that no test runs twice):
     GF_TEST_ONLY=a,b   run only the tests named
     GF_TEST_SKIP=a,b   run all but these (another suite runs them): a line
                        "-- name: run elsewhere (GF_TEST_SKIP)" each
   Tests left out so are not counted: they pass or fail where they run. */
#ifndef GF_TEST_H
#define GF_TEST_H
#include <stdio.h>
#include <stdlib.h>
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

/* name is in the comma-separated list held by environment variable var */
static int gf_t_listed(const char *var, const char *name)
{
    const char *l = getenv(var), *p;
    size_t n = strlen(name);
    if (!l) return 0;
    for (p = l; (p = strstr(p, name)) != NULL; p += n)
        if ((p == l || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}
/* 1: run the test; 0: leave it out (GF_TEST_ONLY, GF_TEST_SKIP) */
static int gf_t_wanted(const char *name)
{
    if (getenv("GF_TEST_ONLY") && !gf_t_listed("GF_TEST_ONLY", name)) return 0;
    if (gf_t_listed("GF_TEST_SKIP", name)) { printf("-- %s: run elsewhere (GF_TEST_SKIP)\n", name); return 0; }
    return 1;
}

#define RUN(fn) do { if (gf_t_wanted(#fn)) { int gf_t_before = gf_t_bad; gf_t_current = #fn; fn(); \
    if (gf_t_bad == gf_t_before) { gf_t_pass++; printf("PASS %s\n", #fn); } \
    else { gf_t_fail++; printf("FAIL %s\n", #fn); } } } while (0)

#define TEST_SUMMARY() (printf("%d passed, %d failed\n", gf_t_pass, gf_t_fail), gf_t_fail ? 1 : 0)
#endif
