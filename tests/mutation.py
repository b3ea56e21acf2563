#!/usr/bin/env python3
"""Mutation testing of gpufeed.h: does `make check` notice a one-token bug?

    make mutation                           (or: python3 tests/mutation.py)
    python3 tests/mutation.py --list        the mutations and whether each target is found
    python3 tests/mutation.py --only ID[,ID]  just these (after the baseline)

Copies the repository's files (tracked ones and untracked ones git does not
ignore, and the .venv link) into build/mutation/work, runs `make check` there
once unmutated (the baseline: it must pass), then once per mutation with one
change applied to the copy's gpufeed.h, restoring it afterwards. The real
gpufeed.h is never written. `make check` runs with GF_FAIL_FAST=1 (the first
failing suite stops the run; GF_SKIP_TIMING=1, which only make test's
loader suite reads (make check has no timing checks); GF_SKIP_LAYOUT=1: the layout
suite, which checks the header's shape (a mutant that makes a line too
long is not caught by a behaviour test), is skipped) and a time limit of 3x the baseline (a mutant
that hangs counts as caught: "timeout").

A mutation names its target by code, not by line: `at` is a piece of
gpufeed.h's code, matched whitespace-insensitively (any run of spaces and
newlines between its tokens matches, so reflowed or split lines still
match), and must match exactly once in the file; `old` (default: all of
`at`) is the part of that match to replace, matched the same way, once,
inside it; `new` is what replaces it. A target found 0 or 2+ times is an
ERROR (not caught, not survived): repair the pattern. A mutant that does
not compile is an ERROR(compile): the compiler is not a test, fix the
mutation.

Per mutation one line: id, section, result (CAUGHT by <first failing
suite>, SURVIVED, ERROR), seconds, what it does. Then the score (caught /
mutants run), the survivors with their note when the mutation declares it
equivalent (`equivalent`: why it cannot change behaviour), and how many are
unexplained. Exit status 1 when the score is under 90%, a survivor is
unexplained or any mutation is an ERROR. Logs: build/mutation/logs/<id>.log.
Not part of `make check` or `make test`: about a minute or two per mutant.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "build", "mutation", "work")
LOGS = os.path.join(ROOT, "build", "mutation", "logs")
THRESHOLD = 90.0


def M(id, section, what, at, old=None, new="", equivalent=None):
    return dict(id=id, section=section, what=what, at=at, old=old, new=new, equivalent=equivalent)


# Sections: base, source, remote, thrift, metadata, pages, codecs, decode, column,
# dense (conversions, dataset, page index, units, batch reader), loader,
# cache, upload, dlpack. Each `at` is code of that section (never a comment,
# never a line number).
MUTATIONS = [
    # ---- base: varints, CRC32, hashing
    M("base-varint-end", "base", "gf__varint reads one byte past the end (p >= end -> p > end)",
      at="for (i = 0; i < maxb; i++) { if (p >= end) return 0;", old="p >= end", new="p > end"),
    M("base-crc-poly", "base", "CRC32 table built from another polynomial (0xEDB88320 -> 0xEDB88321)",
      at="c->t[0][j] = v; v = (v >> 1) ^ (0xEDB88320u & (0u - (v & 1u)));", old="0xEDB88320u", new="0xEDB88321u"),
    M("base-hash-avalanche", "base", "gpufeed_hash64's final avalanche shifts by 32, not 33",
      at="h ^= h >> 33; h *= GF__P2; h ^= h >> 29;", old="h >> 33", new="h >> 32"),
    # ---- source
    M("source-mem-bound", "source", "the memory source reads one byte past its end (len > size - off + 1)",
      at="if (off > m->size || len > m->size - off) return -1;", old="len > m->size - off", new="len > m->size - off + 1"),
    M("source-map-placed", "source", "a file's mapping placed on a 2 MiB boundary, not a page past it",
      at="a = r + ((huge - ((uintptr_t)r & (huge - 1))) & (huge - 1)) + ps;", old="(huge - 1)) + ps;", new="(huge - 1));"),
    # ---- remote: what test_remote_unit checks without a network (the quick suite)
    M("remote-coalesce-gap", "remote", "a gap larger than the wanted bytes merged (off - pend <= useful -> <= 2 * useful)",
      at="if (off[a] <= pend || (off[a] - pend <= gap && off[a] - pend <= useful)) {", old="off[a] - pend <= useful", new="off[a] - pend <= 2 * useful"),
    M("remote-u64-overflow", "remote", "a 20-digit number past 2^64 accepted (v > (UINT64_MAX - d) / 10 -> / 9)",
      at="if (d > 9 || v > (UINT64_MAX - d) / 10) return -1;", old="(UINT64_MAX - d) / 10", new="(UINT64_MAX - d) / 9"),
    M("remote-range-answered", "remote", "a ranged GET answered with another start accepted",
      at="if (q->has_cr > 0 && (q->cr_a != q->off || q->cr_b != q->off + q->len - 1)) {", old="q->cr_a != q->off || ", new=""),
    M("remote-glob-segment", "remote", "'*' matches across '/' (a glob's star leaves its segment)",
      at="if (!*k || *k == '/') return 0;\n                k++;", old="|| *k == '/'", new=""),
    M("remote-hidden", "remote", "keys whose segments start with '_' are not hidden",
      at="if (*s == '_' || *s == '.') return 1;", old="*s == '_' || ", new=""),
    # ---- thrift: every bounds check at its exact boundary
    M("thrift-uvar-end", "thrift", "varint: reads past the end (p >= end -> p > end)",
      at='if (t->p >= t->end) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "truncated varint");', old="t->p >= t->end", new="t->p > t->end"),
    M("thrift-uvar-overlong", "thrift", "varint: a 10th byte with shift 63 called overlong (shift > 63 -> shift >= 63)",
      at='shift += 7; if (shift > 63) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "overlong varint");', old="shift > 63", new="shift >= 63"),
    M("thrift-uvar-bit64", "thrift", "varint: a 10th byte with bit 1 set is not an overflow (0x7E -> 0x7C)",
      at="if (shift == 63 && (b & 0x7E))", old="0x7E", new="0x7C"),
    M("thrift-field-end", "thrift", "field header: reads past the end (p >= end -> p > end)",
      at='if (t->p >= t->end) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "truncated struct (no STOP)");', old="t->p >= t->end", new="t->p > t->end"),
    M("thrift-field-id-delta", "thrift", "field id by delta: 32767 refused (> 32767 -> >= 32767)",
      at="if (*last + (b >> 4) > 32767)", old="> 32767", new=">= 32767"),
    M("thrift-field-id-long", "thrift", "field id in full: 32767 refused (v > 32767 -> v > 32766)",
      at="if (v < -32768 || v > 32767)", old="v > 32767", new="v > 32766"),
    M("thrift-field-type", "thrift", "field type 13 accepted as a field type (type > 12 -> type > 13)",
      at='if (type == 0 || type > 12) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "invalid field type %d", type);', old="type > 12", new="type > 13"),
    M("thrift-need-exact", "thrift", "a length that exactly fills the bytes left is refused (n > left -> n >= left)",
      at="if (!t->err && n > (uint64_t)(t->end - t->p))", old="n > (uint64_t)", new="n >= (uint64_t)"),
    M("thrift-need-plus1", "thrift", "a length one byte past the end is accepted (n > left -> n > left + 1)",
      at="if (!t->err && n > (uint64_t)(t->end - t->p))", old="(uint64_t)(t->end - t->p)", new="(uint64_t)(t->end - t->p) + 1"),
    M("thrift-list-hdr-end", "thrift", "list header: reads past the end (p >= end -> p > end)",
      at='if (t->p >= t->end) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "truncated list header");', old="t->p >= t->end", new="t->p > t->end"),
    M("thrift-list-fit", "thrift", "a list whose count equals the bytes left is refused (cnt > left -> cnt >= left)",
      at="if (cnt > (uint64_t)(t->end - t->p)) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, \"list of %llu elements cannot fit", old="cnt > (uint64_t)", new="cnt >= (uint64_t)"),
    M("thrift-list-elem-type", "thrift", "list element type 13 accepted (*etype > 12 -> *etype > 13)",
      at="if (cnt > 0 && (*etype == 0 || *etype > 12))", old="*etype > 12", new="*etype > 13"),
    M("thrift-struct-depth", "thrift", "skipped structs: the nesting limit one level early (> MAX_THRIFT_DEPTH -> >=)",
      at="int id = 0, last = 0, ft; if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH)", old="++t->depth > GPUFEED_MAX_THRIFT_DEPTH", new="++t->depth >= GPUFEED_MAX_THRIFT_DEPTH"),
    M("thrift-map-fit", "thrift", "a map of n entries in exactly 2n+1 bytes refused (n > left / 2 -> n >= left / 2)",
      at="if (n > (uint64_t)(t->end - t->p) / 2)", old="n > (uint64_t)", new="n >= (uint64_t)"),
    M("thrift-map-types", "thrift", "map value type 13 accepted (vt > 12 -> vt > 13)",
      at="if (kt == 0 || kt > 12 || vt == 0 || vt > 12)", old="vt > 12", new="vt > 13"),
    M("thrift-int-range", "thrift", "an integer equal to its field's upper bound refused (v > hi -> v >= hi)",
      at="if (!t->err && (v < lo || v > hi))", old="v > hi", new="v >= hi"),
    # ---- metadata: the footer
    M("meta-size-min", "metadata", "files of 11 bytes pass the size check (size < 12 -> size < 11)",
      at="if (f->size < 12)", old="f->size < 12", new="f->size < 11"),
    M("meta-footer-len-11", "metadata", "footer length size - 11 (into the head magic) accepted (size - 12 -> size - 11)",
      at="if ((uint64_t)flen > f->size - 12)", old="f->size - 12", new="f->size - 11"),
    M("meta-footer-len-ge", "metadata", "footer length size - 12 (the footer right after the magic) refused (> -> >=)",
      at="if ((uint64_t)flen > f->size - 12)", old="(uint64_t)flen >", new="(uint64_t)flen >="),
    M("meta-footer-empty", "metadata", "an empty footer not refused (flen == 0 check dropped)",
      at="if (flen == 0) return gf__seterr(err, GPUFEED_ERR_FOOTER,", old="flen == 0", new="flen == 0 && 0"),
    M("meta-schema-depth", "metadata", "schema depth limit one level late (depth > MAX_SCHEMA_DEPTH -> depth > MAX + 1)",
      at="if (depth > GPUFEED_MAX_SCHEMA_DEPTH) {", old="GPUFEED_MAX_SCHEMA_DEPTH", new="GPUFEED_MAX_SCHEMA_DEPTH + 1"),
    M("meta-schema-fit", "metadata", "n schema elements in exactly 3n bytes refused (n > left / 3 -> n >= left / 3)",
      at='if (n > (uint32_t)((t->end - t->p) / 3)) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "%u schema elements cannot fit', old="n > (uint32_t)", new="n >= (uint32_t)"),
    M("meta-children", "metadata", "num_children that use up every element left refused (> nse - next -> >=)",
      at="if ((uint32_t)e->num_children > b->nse - next)", old="> b->nse", new=">= b->nse"),
    M("meta-repetition", "metadata", "repetition type 3 accepted (repetition > 2 -> > 3)",
      at="if (!e->has_rep || e->repetition < 0 || e->repetition > 2)", old="e->repetition > 2", new="e->repetition > 3"),
    M("meta-rows-total", "metadata", "row groups' rows not checked against num_rows",
      at="if (total != md->num_rows && d.nrg > 0)", old="total != md->num_rows", new="total != md->num_rows && 0"),
    # ---- pages: page headers and their sizes (the column's page walk)
    M("pages-dph-required", "pages", "a v1 data page header without its encoding passes (mask 3 -> 1)",
      at="if (!t->err && (seen & (v2 ? 15u : 3u)) != (v2 ? 15u : 3u))", new="if (!t->err && (seen & (v2 ? 15u : 1u)) != (v2 ? 15u : 1u))"),
    M("pages-header-cap", "pages", "a header read is capped at MAX_PAGE_HEADER_SIZE from n >= it, not n > it",
      at="if (n > GPUFEED_MAX_PAGE_HEADER_SIZE) n = GPUFEED_MAX_PAGE_HEADER_SIZE;", old="n > GPUFEED_MAX_PAGE_HEADER_SIZE", new="n >= GPUFEED_MAX_PAGE_HEADER_SIZE",
      equivalent="when n equals GPUFEED_MAX_PAGE_HEADER_SIZE the assignment stores the value n already has"),
    M("pages-header-limit", "pages", "a header needing exactly MAX_PAGE_HEADER_SIZE bytes: the limit error one step late (n >= MAX -> n > MAX)",
      at="if (n >= GPUFEED_MAX_PAGE_HEADER_SIZE) return gf__col_fail(c, GPUFEED_ERR_LIMIT,", old="n >= GPUFEED_MAX_PAGE_HEADER_SIZE", new="n > GPUFEED_MAX_PAGE_HEADER_SIZE"),
    M("pages-negative-size", "pages", "compressed size -1 not called negative (csize < 0 -> csize < -1)",
      at="if (h.csize < 0 || h.usize < 0) return gf__col_fail(c, GPUFEED_ERR_PAGE, \"negative page size", old="h.csize < 0", new="h.csize < -1"),
    M("pages-past-region", "pages", "a page ending exactly at the column data's end refused (> -> >=)",
      at="if (body > c->region_end || (uint64_t)h.csize > c->region_end - body)", old="(uint64_t)h.csize >", new="(uint64_t)h.csize >="),
    M("pages-past-region-plus1", "pages", "a page one byte past the column data accepted (csize > end - body -> > end - body + 1)",
      at="if (body > c->region_end || (uint64_t)h.csize > c->region_end - body)", old="c->region_end - body)", new="c->region_end - body + 1)"),
    M("pages-crc", "pages", "a data page's CRC mismatch ignored",
      at="if (got != (uint32_t)h.crc) return gf__col_fail(c, GPUFEED_ERR_CHECKSUM,", old="got != (uint32_t)h.crc", new="got != (uint32_t)h.crc && 0"),
    M("pages-dict-past-region", "pages", "a dictionary page ending exactly where the column data ends refused (> -> >=)",
      at="(uint64_t)h.csize > c->region_end - c->pos - hlen)", old="(uint64_t)h.csize >", new="(uint64_t)h.csize >=",
      equivalent="equivalent on every file whose pages do not overlap: this check runs only after a seek, when the data "
                 "page sought (inside the column data, after the dictionary page) needs the dictionary, so the dictionary "
                 "page ends before the column data does and > and >= agree; they differ only when an offset index points "
                 "a data page into the dictionary page's own bytes (the original reads on, the mutant reports an error)"),
    # ---- codecs
    M("codec-snappy-offset", "codecs", "snappy: a copy offset one past the bytes produced accepted",
      at="if (off == 0 || off > base + (uint64_t)(op - buf)) { gf__fmt(msg, cap, \"snappy: copy offset",
      old="off > base + (uint64_t)(op - buf)", new="off > base + (uint64_t)(op - buf) + 1"),
    M("codec-snappy-fast-near", "codecs", "snappy's fast loop: a copy one byte longer than its offset read as two loads (len <= off -> len <= off + 1)",
      at="else if (len >= 4 && len <= 8 && len <= off) {", old="len <= off", new="len <= off + 1"),
    M("codec-snappy-fast-wide", "codecs", "snappy's fast loop: a copy from 15 bytes back moved 16 bytes at once (off >= 16 -> off >= 15)",
      at="if (off >= 16 && len <= 16) memcpy(op, from, 16);", old="off >= 16", new="off >= 15"),
    M("codec-snappy-fast-len", "codecs", "snappy's fast loop: a copy of 8 bytes from 7 back read as two loads (off >= 8 -> off >= 7)",
      at="if (len - 4 <= 4 && off >= 8) {", old="off >= 8", new="off >= 7"),
    M("codec-snappy-input", "codecs", "snappy: an element cut by the end of the input at hand called a truncated stream though more input follows",
      at="if (z->more) { z->ip = at; z->op = op; return GF__SNAP_INPUT; }", old="if (z->more)", new="if (0)"),
    M("codec-snappy-fast-zero", "codecs", "snappy's fast loop: a copy from offset 0 not left to the careful step",
      at="if (off == 0 || off > (size_t)(op - dst)) break;", old="off == 0 ||", new=""),
    M("codec-snappy-page-end", "codecs", "snappy's fast loop runs to the window's end, past the page's last byte",
      at="uint8_t *lend = total - base < (uint64_t)(oend - buf) ? buf + (total - base) : oend;",
      old="total - base < (uint64_t)(oend - buf) ? buf + (total - base) : oend", new="oend"),
    M("codec-snappy-literal60", "codecs", "snappy: a literal tag of length 60 read as a 1-byte length (len > 60 -> len >= 60)",
      at="len = (tag >> 2) + 1; if (len > 60) {", old="len > 60", new="len >= 60"),
    M("codec-lz4-offset", "codecs", "lz4: a match offset one past the bytes produced accepted",
      at="if (off == 0 || off > (size_t)(op - dst)) { gf__fmt(msg, cap, \"lz4: match offset", old="off > (size_t)(op - dst)", new="off > (size_t)(op - dst) + 1"),
    M("codec-lz4-literals", "codecs", "lz4: literals one byte longer than the input left accepted",
      at="if ((size_t)(iend - ip) < lit) goto trunc;", old="(size_t)(iend - ip) < lit", new="(size_t)(iend - ip) + 1 < lit"),
    M("codec-zstd-window", "codecs", "zstd: a window one byte over GPUFEED_MAX_ZSTD_WINDOW accepted",
      at="if (h->window > (uint64_t)GPUFEED_MAX_ZSTD_WINDOW) {", old="(uint64_t)GPUFEED_MAX_ZSTD_WINDOW", new="(uint64_t)GPUFEED_MAX_ZSTD_WINDOW + 1"),
    M("codec-gzip-nlen", "codecs", "gzip: a stored block's NLEN not checked",
      at="if (len != (~nlen & 0xFFFFu)) return gf__inf_fail(", old="len != (~nlen & 0xFFFFu)", new="len != (~nlen & 0xFFFFu) && 0"),
    # ---- decode: RLE/bit-packed hybrid, levels, dictionary indices
    M("decode-rle-value-width", "decode", "RLE: a run value wider than the bit width accepted",
      at="if (r->bw < 32 && (v >> r->bw)) { r->err = 1; return 0; }", old="(v >> r->bw)", new="(v >> r->bw >> 1)"),
    M("decode-rle-run-bytes", "decode", "RLE: a run value's bytes one short of the end refused (< nb -> <= nb)",
      at="if ((uint32_t)(r->end - r->p) < nb) { r->err = 1; return 0; }", old="< nb", new="<= nb"),
    M("decode-levels-rle-len", "decode", "v1 RLE levels that exactly fill the page refused (n > vlen - 4 -> n >= vlen - 4)",
      at="if (n > *vlen - 4) return gf__col_fail(c, GPUFEED_ERR_CORRUPT,", old="n > *vlen - 4", new="n >= *vlen - 4"),
    M("decode-levels-short", "decode", "a page of 3 bytes read for a 4-byte level length (vlen < 4 -> vlen < 3)",
      at='if (*vlen < 4) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page too short for its %s-level length"', old="*vlen < 4", new="*vlen < 3"),
    M("decode-rle-head", "decode", "a bit-packed read from inside a group: the values before the group boundary counted wrong (lit_pos & 7 -> & 3)",
      at="uint32_t head = (uint32_t)((8 - (r->lit_pos & 7)) & 7);", old="(r->lit_pos & 7)", new="(r->lit_pos & 3)"),
    M("decode-unpack-byte", "decode", "a bit-packed group's values loaded from the wrong byte (bit >> 3 -> >> 4)",
      at="#define GF__UNPACK_ONE(J, BW) o[J] = (uint32_t)((gf__ld64(p + (((J) * (BW)) >> 3))", old="(((J) * (BW)) >> 3)", new="(((J) * (BW)) >> 4)"),
    M("decode-levels-byte", "decode", "a byte of max-1 levels spread to rows from the wrong bit (>> 7 -> >> 6)",
      at="return ((x + 0x7F7F7F7F7F7F7F7Full) >> 7) & 0x0101010101010101ull;", old=">> 7", new=">> 6"),
    M("decode-dict-index", "decode", "a dictionary index equal to the entry count accepted (>= dict_n -> > dict_n)",
      at="if (buf[i] >= c->dict_n) return gf__col_fail(c, GPUFEED_ERR_DICTIONARY,", old="buf[i] >= c->dict_n", new="buf[i] > c->dict_n"),
    M("decode-dict-bw", "decode", "dictionary index bit width 33 accepted by the column reader (bw > 32 -> bw > 33)",
      at='const size_t es = c->esz; if (!c->idx_ready) { int bw; if (c->vp >= c->vend) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary indices miss their bit width"); bw = *c->vp; if (bw > 32)', old="bw > 32", new="bw > 33"),
    M("decode-delta-bw", "decode", "DELTA_BINARY_PACKED miniblock bit width 65 accepted",
      at="if (bw > 64) { gf__fmt(msg, cap, \"DELTA_BINARY_PACKED miniblock bit width", old="bw > 64", new="bw > 65"),
    # ---- column: the public reader
    M("column-values-count", "column", "a chunk with fewer values than its metadata says ends without an error",
      at="if (c->rows_done != c->ch->num_values) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, \"chunk ended after %lld of %lld values\"", old="c->rows_done != c->ch->num_values", new="c->rows_done > c->ch->num_values",
      equivalent="rows_done < num_values cannot happen at DONE from the start of a chunk: each data page adds its "
                 "num_values to what the reader must deliver and DONE comes only when every page is delivered (fewer "
                 "values in the pages than the chunk claims stop earlier, with 'the column data ends after N of M "
                 "values'); only after a seek by a lying offset index (the dense layer's predicate columns) can it "
                 "differ, and there both forms fail with GPUFEED_ERR_CORRUPT (the mutant's message comes from the "
                 "caller: 'chunk ended early')"),
    M("column-drop-dict-gather", "column", "skipped dictionary-encoded values gathered from the raw dictionary (NULL once lent back)",
      at="gf__col_values(c, c->enc == GPUFEED_ENC_RLE_DICTIONARY || c->enc == GPUFEED_ENC_PLAIN_DICTIONARY ? NULL : c->out, k)",
      old="? NULL : c->out", new="? c->out : c->out"),
    M("dense-dict-spare-owner", "dense:conversions", "a converted dictionary's raw buffer lent to the scratch and kept by the column too",
      at="*c->spare = c->dict_buf; *c->spare_cap = c->dict_buf_cap; c->dict_buf = NULL;", old="c->dict_buf = NULL;", new=""),
    M("column-release-whole-chunk", "column", "a chunk read to its end queued only up to its last page (a scratch's releases no longer merge)",
      at="if (c->f && c->ch && c->rows_done >= c->f->md.row_groups[c->rg].num_rows) gf__col_unmap_to(c, c->region_end);",
      old="gf__col_unmap_to(c, c->region_end)", new="gf__col_unmap_to(c, c->page_off)"),
    M("column-release-merge-touching", "column", "touching ranges of a file let go one call each instead of one run",
      at="for (j = i + 1; j < q->n && q->r[j].f == x.f && q->r[j].lo <= x.hi; j++)", old="q->r[j].lo <= x.hi", new="q->r[j].lo < x.hi"),
    M("column-release-compact", "column", "a full queue lets its ranges go at once instead of merging each column's pieces first",
      at="if (q->n == GF__RELQ_N) gf__relq_compact(q);", old="gf__relq_compact(q);", new="(void)0;"),
    M("column-release-bound", "column", "within a unit a loader worker's queue goes at 8x the flush size, not 4x",
      at="if (q->bytes / (uint64_t)(q->hold > 1 ? q->hold : 1) >= gf__relq_at(q)) (void)gf__relq_flush(q);",
      old="q->hold > 1 ? q->hold : 1", new="q->hold > 1 ? 2 * q->hold : 1"),
    M("column-release-hold", "column", "a one-pass reader's queue waits for 4x the flush size within a unit too",
      at="if (q->bytes / (uint64_t)(q->hold > 1 ? q->hold : 1) >= gf__relq_at(q)) (void)gf__relq_flush(q);",
      old="q->hold > 1 ? q->hold : 1", new="q->hold > 1 ? q->hold : 4"),
    M("column-release-keep", "column", "a loader worker's queue lets go the bytes below keep_to too",
      at="if (q->keep && lo < q->r[i].f->keep_to) lo = q->r[i].f->keep_to;", old="if (q->keep &&", new="if (0 && q->keep &&"),
    M("loader-keep-cache", "loader", "workers keep their files mapped with a tensor cache too (the source is not read again)",
      at="w->s->relq.keep = l->cache == NULL;", old="l->cache == NULL", new="1"),
    M("dense-units-step-tile", "dense:units", "a staged pass reads one tile of rows, whatever the staging tile holds",
      at="s->step = st < GF__TILE ? GF__TILE : st > GF__STEP_MAX ? GF__STEP_MAX : st;", old="s->step = st < GF__TILE ?", new="s->step = 1 ? GF__TILE : st < GF__TILE ?"),
    M("dense-units-dict-share-whole", "dense:units", "a loader's worker shares the dictionaries of whole row groups too (the cache grows with the dataset)",
      at="for (j = s->j0; j < s->j1; j++) GF__DC(s, j).dcp = ux->plan >= 0 ? &ds->dcache : NULL;", old="ux->plan >= 0", new="ux->plan >= -1"),
    M("dense-units-cut-cheap", "dense:units", "a cut through pages of up to 16x the unit's bytes counts as cheap (units cut through large pages again)",
      at="return cost <= 65536 || (double)cost * 4.0 <= (double)rg_bytes", old="(double)cost * 4.0", new="(double)cost * 0.0625"),
    M("dense-units-cut-far-end", "dense:units", "a costly cut is not replaced by the row group's end within 4 units' rows",
      at="else if (rows <= far) best = rows;", old="rows <= far", new="rows < 0"),
    M("dense-units-cut-tail", "dense:units", "a cut may leave a last unit under unit_rows / 2 rows",
      at="if (cand[ci] > tail) continue;", old="cand[ci] > tail", new="cand[ci] > rows"),
    M("dense-units-skip-dict", "dense:units", "a unit starting inside a dictionary page skips its rows with the raw dictionary page, not the shared one",
      at="if (d && r0 > c->rows_done && c->dict_pending", old="r0 > c->rows_done", new="r0 < 0"),
    M("loader-ring-default", "loader", "ring_depth's default stays 2 with more than 4 workers",
      at="l->D = desc->ring_depth ? desc->ring_depth : l->N > 4 ? 4 : 2;", old="l->N > 4 ? 4 : 2", new="2"),
    M("dense-units-step-pred", "dense:units", "a pass over more rows than a tile also with predicates (whose mask holds a tile)",
      at="int same = w == 4 || w == 8, flat = ds->npred == 0;", old="flat = ds->npred == 0", new="flat = 1"),
    M("dense-units-release-end", "dense:units", "a unit's end does not let the queued bytes go (only the bound within a unit does)",
      at="if (pl && !s->own) gf__scratch_rg_end(s, pl); gf__relq_unit_end(&s->relq);", old="gf__relq_unit_end(&s->relq);", new="if (0) gf__relq_unit_end(&s->relq);"),
    M("dense-units-rg-keep", "dense:units", "a unit of a split row group queues its own bytes while another unit of the row group is being decoded",
      at="if (q->r[i].f == f && q->r[i].lo >= lo && q->r[i].hi <= hi) {", old="q->r[i].f == f", new="q->r[i].f == NULL"),
    M("dense-units-rg-seek", "dense:units", "a unit's seek into a split row group queues the other units' bytes before its pages",
      at="if (c->rgrel && page_offset > c->unmapped_to) c->unmapped_to = page_offset;", old="c->rgrel &&", new="0 &&"),
    M("dense-units-rg-busy", "dense:units", "a unit of a split row group not counted as being decoded",
      at="if (pl && !s->own) (void)gf__atomic_count(&pl->busy, 1);", old="&pl->busy, 1)", new="&pl->busy, 0)"),
    M("dense-units-rg-pending-flush", "dense:units", "a row group left pending stays queued while the next unit maps its pages",
      at="gf__relq_unit_end(&s->relq); /* before the next unit maps its pages */", old="gf__relq_unit_end(&s->relq);", new="(void)s;"),
    M("dense-units-rg-sleep", "dense:units", "a loader's worker sleeps on a full ring with its row group still pending",
      at="if (w->s->pend) gf__scratch_rg_pending(w->s, NULL);", old="if (w->s->pend)", new="if (0)"),
    M("dense-units-rg-pending", "dense:units", "the last unit of a split row group to end lets it go at once though its columns are still inside it",
      at="if (inside) s->pend = pl;", old="if (inside)", new="if (0)"),
    M("column-pieces-hint", "column", "a dense reader's header read 4 KiB ahead even past the unit's announced ranges",
      at="if (c->z_want && ahead > 4096) ahead = 4096;", old="c->z_want && ahead > 4096", new="c->z_want"),
    M("column-pieces-off", "column", "a streamed page of a file read through read_at read whole, not a piece at a time",
      at="(uint64_t)h.csize > GF__Z_IN &&", old="GF__Z_IN", new="GPUFEED_MAX_PAGE_SIZE"),
    M("column-pieces-window", "column", "a page's first piece read again though its header's read already brought those bytes",
      at="got = c->win_off + c->win_len - at;", new="got = 0;"),
    M("column-pieces-ibase", "column", "a page read in pieces: the stream offset of the piece at hand not moved on (errors name the wrong input byte)",
      at="z->ibase += (uint64_t)(z->ip - z->src);", new=""),
    M("column-pieces-more", "column", "a page read in pieces: the input's end taken for the stream's end after the second piece",
      at="z->more = have + n < c->zin_len;", old="have + n < c->zin_len", new="0"),
    M("column-stream-base", "column", "a streamed page's window moved without its page offset following",
      at="z->base += keep; z->buf = c->zbuf;", old="z->base += keep;", new="z->base += keep / 2;"),
    M("column-stream-levels", "column", "a streamed page's levels copied out half",
      at="memcpy(c->lbuf, *lv, (size_t)(*lv_end - *lv));", old="(size_t)(*lv_end - *lv)", new="(size_t)(*lv_end - *lv) / 2"),
    M("column-stream-hook", "column", "a streamed page's dictionary indices told their bytes came when decoding them failed",
      at="return gf__col_z_need(c, gf__col_z_pos(c, c->idx.p) + ahead) != GPUFEED_OK;", old="!= GPUFEED_OK", new="!= GPUFEED_OK && 0",
      equivalent="gf__col_z_need fails before it moves the indices' end (c->idx.end) past the bytes it had: the bytes the "
                 "run asked for are never handed over, so the run the hook answered for comes up short, the indices end "
                 "early and the column fails anyway, with the codec's message (a column keeps its first error); the mutant "
                 "only reaches that failure through the short run instead of at once"),
    M("column-stream-hook-set", "column", "a streamed page's dictionary indices read with no hook (their runs never ask for their bytes)",
      at="if (c->z_on) { c->idx.need = gf__col_z_hook; c->idx.need_ctx = c; }", old="if (c->z_on)", new="if (0)"),
    M("column-stream-trailing", "column", "bytes after a streamed page's last element not checked",
      at="while (!r && c->z_on && (c->z.ip < c->z.iend || c->z.more)) {", old="!r && c->z_on", new="!r && !c->z_on"),
    M("column-stream-history", "column", "a copy from past a streamed page's window called corrupt instead of decoding the page whole",
      at="if (st == GF__SNAP_HISTORY) return gf__col_z_whole(c);", old="return gf__col_z_whole(c);", new="{ c->z_on = 0; return gf__col_fail(c, GPUFEED_ERR_CODEC, \"history\"); }"),
    M("column-dict-after-data", "column", "a dictionary page after data pages accepted",
      at="if (c->data_pages > 0) return gf__col_fail(c, GPUFEED_ERR_PAGE, \"dictionary page after data pages\");", old="c->data_pages > 0", new="c->data_pages > 1"),
    M("dense-scatter-avx512-count", "dense:conversions", "the AVX-512 null spread of 4-byte values counts one present row short per 16",
      at="_mm512_mask_expandloadu_epi32(fv, (__mmask16)m, src + (size_t)j * 4)); j += (uint32_t)_mm_popcnt_u32(m);",
      old="_mm_popcnt_u32(m)", new="_mm_popcnt_u32(m & 0x7FFFu)"),
    M("dense-scatter-avx512-fill", "dense:conversions", "the AVX-512 null spread of 8-byte values writes a wrong fill for nulls (f -> f >> 8)",
      at="fv = _mm512_set1_epi64((long long)f);", old="(long long)f", new="(long long)(f >> 8)"),
    M("dense-gather-range", "dense:conversions", "a dictionary index equal to the entry count passes the gathers' check (dn - 1 -> dn)",
      at="last = _mm_set1_epi32((int)((dn - 1) ^ 0x80000000u));", old="(dn - 1)", new="(dn)"),
    # ---- dense: conversions
    M("dense-u8-range", "dense:conversions", "256 fits u8 (hi = 255 -> 256)",
      at="case GPUFEED_DT_U8: lo = 0; hi = 255; break;", old="hi = 255", new="hi = 256"),
    M("dense-f64-i64-2p63", "dense:conversions", "the double 2^63 converted to int64 (d >= 2^63 -> d > 2^63)",
      at="else if (d >= 9223372036854775808.0) { bad = 1; v = INT64_MAX; }", old="d >= 9223372036854775808.0", new="d > 9223372036854775808.0"),
    M("dense-int-f32-exact", "dense:conversions", "an integer one bit wider than the float's mantissa counted exact under the SAFE cast (16777217 -> "
      "16777216.0f; >= bits -> > bits)",
      at="if (top - low >= bits) return 0;", old="top - low >= bits", new="top - low > bits"),
    M("dense-list-null-fill", "dense:conversions", "a null list row's first element not filled (j = isnull ? 0 -> 1)",
      at="for (j = isnull ? 0 : len; j < W; j++) memcpy(o + (size_t)j * dsz, fill, dsz);", old="isnull ? 0", new="isnull ? 1"),
    M("dense-list-policy", "dense:conversions", "short lists refused under LIST_TRUNCATE (policy != ERROR -> == PAD)",
      at="!(len < W && d->list_policy != GPUFEED_LIST_ERROR)", old="d->list_policy != GPUFEED_LIST_ERROR", new="d->list_policy == GPUFEED_LIST_PAD"),
    # ---- dense: dataset (pruning)
    M("dense-prune-lt", "dense:dataset", "LT does not prune a chunk whose min equals the constant (c1 >= 0 -> c1 > 0)",
      at="case GPUFEED_OP_LT: return hmn && (c1 = gf__cmp_sv(&mn, &p->a)) != 2 && c1 >= 0;", old="c1 >= 0", new="c1 > 0"),
    M("dense-prune-le", "dense:dataset", "LE prunes a chunk whose min equals the constant (c1 > 0 -> c1 >= 0)",
      at="case GPUFEED_OP_LE: return hmn && (c1 = gf__cmp_sv(&mn, &p->a)) != 2 && c1 > 0;", old="c1 > 0", new="c1 >= 0"),
    M("dense-prune-all-null", "dense:dataset", "an all-null chunk not pruned (null_count >= rows -> > rows)",
      at="if (s->has_null_count && s->null_count >= rows && rows > 0) return 1;", old="s->null_count >= rows", new="s->null_count > rows"),
    M("dense-part-lt", "dense:dataset", "a partition value equal to a LT constant kept (cmp < 0 -> cmp <= 0: 2x the rows)",
      at="case GPUFEED_OP_LT: return cmp < 0;", old="cmp < 0", new="cmp <= 0"),
    M("dense-map-huge-all", "dense:dataset", "huge-page advice only for files read more than whole (used >= all - used -> used > all)",
      at="if (used > 0 && used >= all - used) (void)madvise(", old="used >= all - used", new="used > all"),
    # ---- dense: page index, units, batch reader
    M("dense-pidx-first-row", "dense:page index", "an offset index whose first page starts at row 0 rejected",
      at="if (pi->n == 0 || pi->first_row[0] != 0) ok = 0;", old="pi->first_row[0] != 0", new="pi->first_row[0] != 1"),
    M("dense-units-split", "dense:units", "a row group with exactly unit_rows rows left is cut once more (> -> >=)",
      at="while (rows - start > (ds->wide_rows ? 0 : ds->unit_rows)) {", old="(ds->wide_rows ? 0 : ds->unit_rows)", new="(ds->wide_rows ? 0 : ds->unit_rows - 1)"),
    M("dense-reader-batch", "dense:batch reader", "the batch reader fills batches one row short",
      at="int64_t filled = 0; while (filled < r->B) {", old="filled < r->B", new="filled < r->B - 1"),
    # ---- loader
    M("loader-open-slot-zero", "loader", "a failed loader open closes a worker's unit-slot table before it is zeroed",
      at="if (w->ring.slot) memset(w->ring.slot, 0, (size_t)l->D * sizeof(gf__uslot));", old="if (w->ring.slot) memset", new="if (0) memset"),
    M("loader-epoch-perm", "loader", "the unit permutation ignores the epoch",
      at="r.s = gf__mix64(seed ^ gf__mix64((uint64_t)epoch ^ 0x6770756665656421ull));", old="(uint64_t)epoch ^", new="(uint64_t)epoch * 0 ^"),
    M("loader-pad-world2", "loader", "ranks of a world of 2 not padded (world > 1 -> world > 2)",
      at="p->pad = (l->world > 1 && nb * l->B > R) ? nb * l->B - R : 0;", old="l->world > 1", new="l->world > 2"),
    M("loader-resume-end", "loader", "resuming at start_batch == the epoch's batch count stays in that epoch (== nb -> == nb + 1)",
      at="if (p->nb > 0 && desc->start_batch == p->nb) { l->first_epoch++; l->bidx0 = 0; }", old="desc->start_batch == p->nb", new="desc->start_batch == p->nb + 1"),
    M("loader-claim-slots", "loader", "workers claim one batch more than there are free slots",
      at="int64_t q = GF__LOAD_SC(&l->claim); for (;;) { if (q >= GF__LOAD_SC(&l->released) + l->S) return 0;", old="+ l->S", new="+ l->S + 1"),
    M("loader-window-table-bucket", "loader", "the shuffled gather's unit table cut in buckets twice the shortest unit (a bucket can hold two unit starts)",
      at="while (gg < 62 && ((int64_t)2 << gg) <= mn) gg++;", old="(int64_t)2 << gg", new="(int64_t)1 << gg"),
    M("loader-window-table-cap", "loader", "a unit table of more buckets than it holds accepted",
      at="if (nb > GF__WT_MAX) return 0;", old="nb > GF__WT_MAX", new="nb > 4 * GF__WT_MAX"),
    M("loader-ring-bound", "loader", "a worker claims a stream position whose slot still holds an unreleased one (dtail + RS -> dtail + RS + 1)",
      at="if (p >= GF__LOAD_SC(&l->dtail) + l->RS) return 0;", old="+ l->RS", new="+ l->RS + 1"),
    M("loader-ring-release", "loader", "the frontier frees one position more than it released (g + 1 -> g + 2)",
      at="GF__STORE_SC(&l->dtail, g + 1);", old="g + 1", new="g + 2"),
    M("loader-ring-publish", "loader", "a slot counts as published for any position it held (pub == g + 1 -> pub != 0)",
      at="return GF__LOAD(&gf__slot_of(l, g)->pub) == g + 1;", old="== g + 1", new="!= 0"),
    # ---- cache
    M("cache-key-dtype", "cache", "the dataset identity leaves out each feature's dtype",
      at="gf__h2_str(&k, f->column); gf__h2_u64(&k, (uint64_t)f->dtype);", old="gf__h2_u64(&k, (uint64_t)f->dtype);", new=";"),
    M("cache-key-fill", "cache", "the dataset identity leaves out each feature's fill value",
      at="gf__h2_feed(&k, &f->fill, 8);", new=";"),
    M("cache-key-mtime-ns", "cache", "the key hashes a source's modification seconds twice, not seconds and nanoseconds (a rewrite within the "
      "second served stale)",
      at="gf__h2_u64(&k, src[i].mtime_s); gf__h2_u64(&k, src[i].mtime_ns);", old="gf__h2_u64(&k, src[i].mtime_ns);",
      new="gf__h2_u64(&k, src[i].mtime_s);"),
    M("cache-header-sum", "cache", "the header checksum not verified at open",
      at='if (gpufeed_hash64(hdr, GF__CACHE_HDR - 8, 0) != gf__ld64(hdr + GF__CACHE_HDR - 8)) { gf__fmt(why, cap, "%s: header checksum mismatch"', old="!= gf__ld64(hdr + GF__CACHE_HDR - 8)", new="!= gf__ld64(hdr + GF__CACHE_HDR - 8) && 0"),
    M("cache-version", "cache", "an older format version accepted at open (v != VERSION -> v > VERSION)",
      at="if (v != GF__CACHE_VERSION) { gf__fmt(why, cap,", old="v != GF__CACHE_VERSION", new="v > GF__CACHE_VERSION"),
    M("cache-unit-sum-map", "cache", "a unit read into the cache held in memory served without its checksum",
      at="if (gf__cache_read_unit(c, u, pc, np, base)) return gf__cache_bad(c, u);", old="np, base))", new="np, base) && 0)"),
    M("cache-unit-sum", "cache", "a unit read into a ring slot (no_map) served without its checksum",
      at="if (gf__cache_read_unit(c, u, pc, np, NULL)) return gf__cache_bad(c, u);", old="np, NULL))", new="np, NULL) && 0)"),
    # ---- upload
    M("upload-slot-refs", "upload", "a slot whose DLPack tensors are alive is reused",
      at="if (!u->s[q].held && !u->s[q].refs) { at = q; break; }", old="&& !u->s[q].refs", new=""),
    M("upload-release-serial", "upload", "releasing a batch whose slot holds a newer one is accepted",
      at='if (!s->held || s->serial != b->serial) { gf__fmt(u->err, sizeof u->err, "uploader: release of batch', old="|| s->serial != b->serial", new=""),
    M("upload-release-slot", "upload", "a release naming slot n (one past the last) not refused (slot >= n -> slot > n)",
      at="if (b->slot < 0 || b->slot >= u->n) { gf__fmt(u->err, sizeof u->err, \"uploader: release of slot", old="b->slot >= u->n", new="b->slot > u->n"),
    # ---- dlpack
    M("dlpack-bf16-code", "dlpack", "bf16 exported with DLPack's float code",
      at="case GPUFEED_DT_BF16: d.code = GPUFEED_DL_BFLOAT; d.bits = 16; break;", old="GPUFEED_DL_BFLOAT", new="GPUFEED_DL_FLOAT"),
    M("dlpack-f16-bits", "dlpack", "f16 exported as 32 bits",
      at="case GPUFEED_DT_F16: d.code = GPUFEED_DL_FLOAT; d.bits = 16; break;", old="d.bits = 16", new="d.bits = 32"),
    M("dlpack-feature-ndim", "dlpack", "a one-column per-feature array exported as 2-D (shape[1] > 1 -> >= 1)",
      at="t->ndim = k->shape[1] > 1 ? 2 : 1;", old="k->shape[1] > 1", new="k->shape[1] >= 1"),
    M("dlpack-feature-stride", "dlpack", "a per-feature array's row stride 1 instead of its width",
      at="k->strides[0] = k->shape[1]; k->strides[1] = 1;", old="k->strides[0] = k->shape[1];", new="k->strides[0] = 1;"),
]


# ---- matching ------------------------------------------------------------------

TOKEN = re.compile(r"\w+|\S")


def pattern(code):
    """A regex for code whose tokens may be separated by any whitespace
    (at least some between two word tokens, as C needs)."""
    toks = TOKEN.findall(code)
    if not toks:
        raise ValueError("empty pattern")
    out = [re.escape(toks[0])]
    for a, b in zip(toks, toks[1:]):
        word = re.match(r"\w", a[-1]) and re.match(r"\w", b[0])
        out.append(r"\s+" if word else r"\s*")
        out.append(re.escape(b))
    return re.compile("".join(out))


def locate(src, m):
    """(start, end) of the text to replace, or an error string."""
    hits = [h.span() for h in pattern(m["at"]).finditer(src)]
    if len(hits) != 1:
        return "pattern `at` matches %d times (must be exactly once)" % len(hits)
    a, b = hits[0]
    if m["old"] is None:
        return a, b
    inner = [h.span() for h in pattern(m["old"]).finditer(src, a, b)]
    if len(inner) != 1:
        return "pattern `old` matches %d times inside `at` (must be exactly once)" % len(inner)
    return inner[0]


def mutate(src, m):
    span = locate(src, m)
    if isinstance(span, str):
        return None, span
    a, b = span
    return src[:a] + m["new"] + src[b:], None


# ---- the copy and make check ---------------------------------------------------------

def copy_tree():
    """build/mutation/work: the repository's files as they are now."""
    if os.path.isdir(WORK):
        for name in os.listdir(WORK):  # keep build/ (objects are rebuilt anyway), replace the rest
            if name == "build":
                continue
            p = os.path.join(WORK, name)
            if os.path.islink(p) or not os.path.isdir(p):
                os.unlink(p)
            else:
                shutil.rmtree(p)
    os.makedirs(WORK, exist_ok=True)
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, check=True, capture_output=True).stdout.split(b"\0")
    for rel in files:
        if not rel:
            continue
        rel = rel.decode()
        src = os.path.join(ROOT, rel)
        if not os.path.lexists(src):  # deleted in the working tree
            continue
        dst = os.path.join(WORK, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    venv = os.path.join(ROOT, ".venv")
    if os.path.lexists(venv):  # what make check uses when it is there (pyarrow checks)
        os.symlink(os.path.realpath(venv), os.path.join(WORK, ".venv"))


SUITE_LINE = re.compile(r"^(\S+)\s+(\d+) passed,\s+(\d+) failed")


class Run:
    def __init__(self, rc, out, secs, timed_out):
        self.rc, self.out, self.secs, self.timed_out = rc, out, secs, timed_out
        self.first_failed = None
        for line in out.splitlines():
            s = SUITE_LINE.match(line)
            if s and int(s.group(3)) > 0 and s.group(1) != "(":
                self.first_failed = s.group(1)
                break
        last = [l for l in out.splitlines() if re.match(r"^\d+ passed, \d+ failed", l)]
        self.failed = int(re.match(r"^\d+ passed, (\d+) failed", last[-1]).group(1)) if last else None

    def ok(self):
        return not self.timed_out and self.rc == 0 and self.failed == 0


CURRENT = {"proc": None}


def make_check(timeout, log):
    # GF_SKIP_TIMING: make check has no timing checks any more (they run in
    # make test only); set in case a suite grows one again
    env = dict(os.environ, GF_FAIL_FAST="1", GF_SKIP_TIMING="1", GF_SKIP_LAYOUT="1")
    t0 = time.time()
    with open(log, "w") as f:
        p = subprocess.Popen(["make", "check"], cwd=WORK, env=env, stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True)
        CURRENT["proc"] = p
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            stop(p)
        CURRENT["proc"] = None
    with open(log, errors="replace") as f:
        out = f.read()
    return Run(p.returncode, out, time.time() - t0, timed_out)


def stop(p):
    """Ends `make check` and everything it started (its own session)."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def first_failure(run):
    """The first failure line make check printed, for the report."""
    for line in run.out.splitlines():
        if re.search(r"FAIL|check failed|ERROR|runtime error|Sanitizer", line) and "failures (from" not in line:
            return line.strip()[:160]
    return ""


# ---- main ------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description="mutation testing of gpufeed.h under make check")
    ap.add_argument("--list", action="store_true", help="print the mutations and whether each target is found")
    ap.add_argument("--only", help="comma-separated mutation ids")
    ap.add_argument("--timeout-factor", type=float, default=3.0, help="a mutant's time limit: this x the baseline")
    args = ap.parse_args()

    header = os.path.join(ROOT, "gpufeed.h")
    with open(header) as f:
        src = f.read()
    ids = [m["id"] for m in MUTATIONS]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        print("mutation: duplicate ids %s" % ", ".join(dup))
        return 2
    chosen = MUTATIONS
    if args.only:
        want = [w.strip() for w in args.only.split(",") if w.strip()]
        unknown = [w for w in want if w not in ids]
        if unknown:
            print("mutation: unknown ids %s (see --list)" % ", ".join(unknown))
            return 2
        chosen = [m for m in MUTATIONS if m["id"] in want]

    errors = {}
    for m in chosen:
        _, err = mutate(src, m)
        if err:
            errors[m["id"]] = err

    if args.list:
        sections = {}
        for m in chosen:
            sections[m["section"].split(":")[0]] = sections.get(m["section"].split(":")[0], 0) + 1
            state = "ERROR: " + errors[m["id"]] if m["id"] in errors else "found"
            print("%-14s %-22s %s%s  [%s]" % (m["id"], m["section"], m["what"],
                                              "  (declared equivalent)" if m["equivalent"] else "", state))
        print("%d mutations: %s" % (len(chosen), ", ".join("%s %d" % kv for kv in sections.items())))
        for i, e in errors.items():
            print("PATTERN ERROR %s: %s" % (i, e))
        return 1 if errors else 0

    for i, e in errors.items():
        print("!!! PATTERN ERROR %s: %s -- counted as an error, repair the pattern" % (i, e), flush=True)

    os.makedirs(LOGS, exist_ok=True)
    copy_tree()
    work_h = os.path.join(WORK, "gpufeed.h")

    def restore():
        with open(work_h, "w") as f:
            f.write(src)

    def on_signal(signum, frame):
        if CURRENT["proc"] is not None:
            stop(CURRENT["proc"])
        restore()
        print("\nmutation: interrupted; the copy's gpufeed.h restored (the real one was never written)")
        sys.exit(130)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    print("baseline: make check on the unmutated copy (build/mutation/work) ...", flush=True)
    base = make_check(None, os.path.join(LOGS, "baseline.log"))
    if not base.ok():
        print("baseline FAILED (%s; rc %s, %.0fs): fix make check first. Log: build/mutation/logs/baseline.log"
              % (base.first_failed or "no count line", base.rc, base.secs))
        return 2
    timeout = max(60.0, args.timeout_factor * base.secs)
    print("baseline passed in %.0fs; a mutant's limit is %.0fs" % (base.secs, timeout), flush=True)

    results = []  # (m, verdict, detail, secs)
    t_all = time.time()
    try:
        for m in chosen:
            if m["id"] in errors:
                results.append((m, "ERROR", "pattern: " + errors[m["id"]], 0.0))
            else:
                mutant, _ = mutate(src, m)
                with open(work_h, "w") as f:
                    f.write(mutant)
                try:
                    r = make_check(timeout, os.path.join(LOGS, m["id"] + ".log"))
                finally:
                    restore()
                if r.timed_out:
                    results.append((m, "CAUGHT", "timeout after %.0fs" % r.secs, r.secs))
                elif r.first_failed == "build":
                    results.append((m, "ERROR", "compile: the mutant does not build (see the log)", r.secs))
                elif r.ok():
                    results.append((m, "SURVIVED", "", r.secs))
                else:
                    results.append((m, "CAUGHT", "by %s: %s" % (r.first_failed or "make check (rc %d)" % r.rc,
                                                              first_failure(r)), r.secs))
            m_, v, d, s = results[-1]
            label = v if v != "ERROR" or not d.startswith("compile") else "ERROR(compile)"
            print("%-14s %-20s %-15s %5.0fs  %s%s" % (m_["id"], m_["section"], label, s, m_["what"],
                                                      ("  -- " + d) if d else ""), flush=True)
    finally:
        restore()

    with open(header) as f:
        edited = f.read() != src  # this script writes only the copy: someone edited the real one
    caught = sum(1 for r in results if r[1] == "CAUGHT")
    survived = [r for r in results if r[1] == "SURVIVED"]
    errs = [r for r in results if r[1] == "ERROR"]
    total = caught + len(survived)
    pct = 100.0 * caught / total if total else 0.0
    print()
    print("score: %d/%d (%.1f%%) caught; %d errors; %.0fs in all (baseline %.0fs)"
          % (caught, total, pct, len(errs), time.time() - t_all, base.secs))
    unexplained = 0
    if survived:
        print("survivors:")
        for m, _, _, _ in survived:
            if m["equivalent"]:
                print("  %s (%s): %s -- explained, equivalent: %s" % (m["id"], m["section"], m["what"], m["equivalent"]))
            else:
                unexplained += 1
                print("  %s (%s): %s -- UNEXPLAINED: needs a test" % (m["id"], m["section"], m["what"]))
    print("%d survivors, %d unexplained" % (len(survived), unexplained))
    for m, _, d, _ in errs:
        print("!!! ERROR %s: %s" % (m["id"], d))
    if edited:
        print("note: the repository's gpufeed.h was edited during the run; the score is for the header as it was at the start")
    bad = pct < THRESHOLD or unexplained or errs
    if bad:
        print("mutation: FAILED (%s)" % "; ".join(x for x in [
            "score under %.0f%%" % THRESHOLD if pct < THRESHOLD else "",
            "%d unexplained survivors" % unexplained if unexplained else "",
            "%d errors" % len(errs) if errs else ""] if x))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
