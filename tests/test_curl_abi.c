/* test_curl_abi.c -- gpufeed's own declarations of libcurl (gf__curl and
   the GF__CURL* values in the >>remote section, used where libcurl is
   loaded at run time) against the real curl/curl.h.

   Compiling it checks each entry point's type: a field of gf__curl is
   assigned from the function curl.h declares, so a wrong parameter,
   result or count is a compile error under -Werror (C, where curl's enums
   are compatible with the integer types gpufeed uses). Running it checks
   that every option, info and code value gpufeed uses equals curl.h's,
   that struct CURLMsg's layout matches gf__curlmsg, and that the symbol
   gpufeed asks dlsym for, field by field, is the function curl.h names:
       cc -std=c99 -Wall -Wextra -Werror -pedantic -I. tests/test_curl_abi.c -o build/test_curl_abi -lcurl -lpthread -lm -ldl
   (curl.h from libcurl4-openssl-dev: tools/install_deps.sh). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_CURL
#include "gpufeed.h"
#include "gf_test.h"
#include <curl/curl.h>
#include <dlfcn.h>

#ifndef GPUFEED_CURL
#error "build with GPUFEED_CURL"
#endif

/* every field from curl.h's declaration of the same entry point */
static void fill_from_curl_h(gf__curl *t)
{
    t->global_init = curl_global_init;
    t->easy_init = curl_easy_init;
    t->easy_cleanup = curl_easy_cleanup;
    t->easy_reset = curl_easy_reset;
    t->easy_setopt = curl_easy_setopt;
    t->easy_getinfo = curl_easy_getinfo;
    t->easy_strerror = curl_easy_strerror;
    t->multi_init = curl_multi_init;
    t->multi_cleanup = curl_multi_cleanup;
    t->multi_add_handle = curl_multi_add_handle;
    t->multi_remove_handle = curl_multi_remove_handle;
    t->multi_perform = curl_multi_perform;
    t->multi_wait = curl_multi_wait;
    t->multi_info_read = curl_multi_info_read;
    t->slist_append = curl_slist_append;
    t->slist_free_all = curl_slist_free_all;
}

static void test_names_match_curl_h(void)
{
    gf__curl t;
    size_t i, n = sizeof gf__curl_names / sizeof gf__curl_names[0];
    CHECK_MSG(n * sizeof(void (*)(void)) == sizeof t, "%zu names for %zu fields", n, sizeof t / sizeof(void (*)(void)));
    memset(&t, 0, sizeof t);
    fill_from_curl_h(&t);
    for (i = 0; i < n && i * sizeof(void *) < sizeof t; i++) {
        void *want, *sym = dlsym(RTLD_DEFAULT, gf__curl_names[i]);
        memcpy(&want, (char *)&t + i * sizeof(void *), sizeof want);
        CHECK_MSG(sym && sym == want, "field %zu: gpufeed asks for %s, curl.h's declaration is another symbol", i, gf__curl_names[i]);
    }
}

static void test_values_match_curl_h(void)
{
#define SAME(mine, theirs) CHECK_MSG((long)(mine) == (long)(theirs), "%s = %ld, curl.h: %ld", #mine, (long)(mine), (long)(theirs))
    SAME(GF__CURLOPT_WRITEDATA, CURLOPT_WRITEDATA);
    SAME(GF__CURLOPT_URL, CURLOPT_URL);
    SAME(GF__CURLOPT_RANGE, CURLOPT_RANGE);
    SAME(GF__CURLOPT_WRITEFUNCTION, CURLOPT_WRITEFUNCTION);
    SAME(GF__CURLOPT_LOW_SPEED_LIMIT, CURLOPT_LOW_SPEED_LIMIT);
    SAME(GF__CURLOPT_LOW_SPEED_TIME, CURLOPT_LOW_SPEED_TIME);
    SAME(GF__CURLOPT_HTTPHEADER, CURLOPT_HTTPHEADER);
    SAME(GF__CURLOPT_HEADERDATA, CURLOPT_HEADERDATA);
    SAME(GF__CURLOPT_NOBODY, CURLOPT_NOBODY);
    SAME(GF__CURLOPT_CAINFO, CURLOPT_CAINFO);
    SAME(GF__CURLOPT_HEADERFUNCTION, CURLOPT_HEADERFUNCTION);
    SAME(GF__CURLOPT_NOSIGNAL, CURLOPT_NOSIGNAL);
    SAME(GF__CURLOPT_TIMEOUT_MS, CURLOPT_TIMEOUT_MS);
    SAME(GF__CURLOPT_CONNECTTIMEOUT_MS, CURLOPT_CONNECTTIMEOUT_MS);
    SAME(GF__CURLOPT_USERNAME, CURLOPT_USERNAME);
    SAME(GF__CURLOPT_PASSWORD, CURLOPT_PASSWORD);
    SAME(GF__CURLOPT_AWS_SIGV4, CURLOPT_AWS_SIGV4);
    SAME(GF__CURLOPT_POSTFIELDS, CURLOPT_POSTFIELDS);
    SAME(GF__CURLOPT_CUSTOMREQUEST, CURLOPT_CUSTOMREQUEST);
    SAME(GF__CURLOPT_POSTFIELDSIZE_LARGE, CURLOPT_POSTFIELDSIZE_LARGE);
    SAME(GF__CURLINFO_RESPONSE_CODE, CURLINFO_RESPONSE_CODE);
    SAME(GF__CURLMSG_DONE, CURLMSG_DONE);
    SAME(GF__CURL_GLOBAL_ALL, CURL_GLOBAL_ALL);
    SAME(GF__CURLE_UNSUPPORTED_PROTOCOL, CURLE_UNSUPPORTED_PROTOCOL);
    SAME(GF__CURLE_URL_MALFORMAT, CURLE_URL_MALFORMAT);
    SAME(GF__CURLE_NOT_BUILT_IN, CURLE_NOT_BUILT_IN);
    SAME(GF__CURLE_PARTIAL_FILE, CURLE_PARTIAL_FILE);
    SAME(GF__CURLE_WRITE_ERROR, CURLE_WRITE_ERROR);
    SAME(GF__CURLE_UNKNOWN_OPTION, CURLE_UNKNOWN_OPTION);
#undef SAME
}

static void test_curlmsg_layout(void)
{
    CHECK(sizeof(gf__curlmsg) == sizeof(CURLMsg));
    CHECK(offsetof(gf__curlmsg, msg) == offsetof(CURLMsg, msg));
    CHECK(offsetof(gf__curlmsg, easy) == offsetof(CURLMsg, easy_handle));
    CHECK(offsetof(gf__curlmsg, data) == offsetof(CURLMsg, data));
    CHECK(sizeof(((gf__curlmsg *)0)->data) == sizeof(((CURLMsg *)0)->data));
}

/* the library gpufeed loads is one that has every entry point, and new
   enough to sign (CURLOPT_AWS_SIGV4 known) */
static void test_load(void)
{
    gf__curl c;
    void *lib = NULL;
    char why[256];
    int r = gf__curl_load(&c, &lib, why, sizeof why);
    CHECK_MSG(r == 0, "%s", why);
    if (r == 0) {
        void *e = c.easy_init();
        CHECK(e != NULL);
        if (e) {
            CHECK(c.easy_setopt(e, GF__CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3") == 0);
            c.easy_cleanup(e);
        }
    }
    if (lib) dlclose(lib);
}

int main(void)
{
    RUN(test_names_match_curl_h);
    RUN(test_values_match_curl_h);
    RUN(test_curlmsg_layout);
    RUN(test_load);
    return TEST_SUMMARY();
}
