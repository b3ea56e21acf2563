/* pq_writer.h -- a tiny Parquet *writer* for gpufeed's tests.

   Header-only, every function static (prefix pqw_). It exists to build
   precisely-malformed files: every header and metadata field can be set to
   any value (pqw_set), left out (pqw_omit) or left to its computed default
   (a zero-initialised pqw_i). Hooks append extra (unknown) Thrift fields
   to any struct, and raw byte replacements stand in for a serialized page
   header or the whole footer.

   Pieces:
     pqw_buf           growable byte buffer, little-endian puts, varints
     pqw_tc_*          Thrift Compact Protocol encoder
     pqw_rle_* etc.    RLE / bit-packed hybrid encoder, MSB BIT_PACKED
     pqw_plain_*       PLAIN encoders for all physical types
     pqw_snappy_*      a literal-only and a real (greedy hash) SNAPPY encoder,
                       whole-stream or in 64 KiB blocks as writers compress
     pqw_crc32         CRC-32 (IEEE) for page CRCs
     pqw_build         PAR1 + column chunks + FileMetaData + length + PAR1

   Field ids follow parquet-format's parquet.thrift. Memory: a failed
   allocation aborts (tests only). */
#ifndef PQ_WRITER_H
#define PQ_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#if defined(__GNUC__) || defined(__clang__)
#define PQW_FN static __attribute__((unused))
#else
#define PQW_FN static
#endif

/* ---- byte buffer -------------------------------------------------------- */

typedef struct pqw_buf { uint8_t *p; size_t n, cap; } pqw_buf;

PQW_FN void pqw_reserve(pqw_buf *b, size_t extra)
{
    if (b->cap - b->n < extra) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc - b->n < extra) nc *= 2;
        b->p = (uint8_t *)realloc(b->p, nc);
        if (!b->p) { fprintf(stderr, "pq_writer: out of memory\n"); abort(); }
        b->cap = nc;
    }
}
PQW_FN void pqw_put(pqw_buf *b, const void *d, size_t n)
{
    pqw_reserve(b, n ? n : 1);
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}
PQW_FN void pqw_u8(pqw_buf *b, unsigned v) { uint8_t c = (uint8_t)v; pqw_put(b, &c, 1); }
PQW_FN void pqw_fill(pqw_buf *b, unsigned v, size_t n) { while (n--) pqw_u8(b, v); }
PQW_FN void pqw_le16(pqw_buf *b, uint32_t v) { pqw_u8(b, v & 0xFF); pqw_u8(b, (v >> 8) & 0xFF); }
PQW_FN void pqw_le32(pqw_buf *b, uint32_t v)
{
    int i;
    for (i = 0; i < 4; i++) pqw_u8(b, (v >> (8 * i)) & 0xFF);
}
PQW_FN void pqw_le64(pqw_buf *b, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++) pqw_u8(b, (unsigned)((v >> (8 * i)) & 0xFF));
}
PQW_FN void pqw_set_le32(pqw_buf *b, size_t at, uint32_t v)
{
    int i;
    for (i = 0; i < 4; i++) b->p[at + (size_t)i] = (uint8_t)((v >> (8 * i)) & 0xFF);
}
PQW_FN void pqw_uvarint(pqw_buf *b, uint64_t v)
{
    while (v >= 0x80) { pqw_u8(b, (unsigned)(v & 0x7F) | 0x80); v >>= 7; }
    pqw_u8(b, (unsigned)v);
}
PQW_FN uint64_t pqw_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
PQW_FN void pqw_free(pqw_buf *b) { free(b->p); b->p = NULL; b->n = b->cap = 0; }
PQW_FN void pqw_append(pqw_buf *b, const pqw_buf *src) { pqw_put(b, src->p, src->n); }

/* ---- CRC-32 (IEEE, reflected), bitwise ---------------------------------- */

PQW_FN uint32_t pqw_crc32(const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    uint32_t c = 0xFFFFFFFFu;
    while (n--) {
        int k;
        c ^= *p++;
        for (k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

/* ---- Thrift Compact Protocol encoder ------------------------------------ */

enum {
    PQW_T_STOP = 0, PQW_T_TRUE = 1, PQW_T_FALSE = 2, PQW_T_I8 = 3, PQW_T_I16 = 4,
    PQW_T_I32 = 5, PQW_T_I64 = 6, PQW_T_DOUBLE = 7, PQW_T_BINARY = 8,
    PQW_T_LIST = 9, PQW_T_SET = 10, PQW_T_MAP = 11, PQW_T_STRUCT = 12
};

#define PQW_TC_MAXDEPTH 256
typedef struct pqw_tc {
    pqw_buf *b;
    int depth;                         /* struct nesting (0: outside any struct) */
    int last[PQW_TC_MAXDEPTH];
} pqw_tc;

PQW_FN void pqw_tc_init(pqw_tc *t, pqw_buf *b) { t->b = b; t->depth = 0; t->last[0] = 0; }

/* field header: short form when 0 < delta <= 15, else the long form */
PQW_FN void pqw_tc_field(pqw_tc *t, int id, int type)
{
    int delta = id - t->last[t->depth];
    if (delta > 0 && delta <= 15) pqw_u8(t->b, (unsigned)((delta << 4) | type));
    else { pqw_u8(t->b, (unsigned)type); pqw_uvarint(t->b, pqw_zigzag(id)); }
    t->last[t->depth] = id;
}
PQW_FN void pqw_tc_field_long(pqw_tc *t, int id, int type)
{
    pqw_u8(t->b, (unsigned)type); pqw_uvarint(t->b, pqw_zigzag(id));
    t->last[t->depth] = id;
}
/* a struct value starts (after its field header, or as a list element) */
PQW_FN void pqw_tc_begin(pqw_tc *t)
{
    if (t->depth + 1 >= PQW_TC_MAXDEPTH) { fprintf(stderr, "pq_writer: nesting too deep\n"); abort(); }
    t->last[++t->depth] = 0;
}
PQW_FN void pqw_tc_stop(pqw_tc *t) { pqw_u8(t->b, 0); }
PQW_FN void pqw_tc_end(pqw_tc *t) { pqw_u8(t->b, 0); if (t->depth > 0) t->depth--; }

/* values without a field header (list elements, map keys/values) */
PQW_FN void pqw_tc_v_int(pqw_tc *t, int64_t v) { pqw_uvarint(t->b, pqw_zigzag(v)); }
PQW_FN void pqw_tc_v_bin(pqw_tc *t, const void *p, size_t n) { pqw_uvarint(t->b, n); pqw_put(t->b, p, n); }
PQW_FN void pqw_tc_v_str(pqw_tc *t, const char *s) { pqw_tc_v_bin(t, s, strlen(s)); }
PQW_FN void pqw_tc_v_bool(pqw_tc *t, int v) { pqw_u8(t->b, v ? 1 : 2); }
PQW_FN void pqw_tc_v_double(pqw_tc *t, double d) { uint64_t u; memcpy(&u, &d, 8); pqw_le64(t->b, u); }

/* fields */
PQW_FN void pqw_tc_i8(pqw_tc *t, int id, int v) { pqw_tc_field(t, id, PQW_T_I8); pqw_u8(t->b, (unsigned)(v & 0xFF)); }
PQW_FN void pqw_tc_i16(pqw_tc *t, int id, int v) { pqw_tc_field(t, id, PQW_T_I16); pqw_tc_v_int(t, v); }
PQW_FN void pqw_tc_i32(pqw_tc *t, int id, int64_t v) { pqw_tc_field(t, id, PQW_T_I32); pqw_tc_v_int(t, v); }
PQW_FN void pqw_tc_i64(pqw_tc *t, int id, int64_t v) { pqw_tc_field(t, id, PQW_T_I64); pqw_tc_v_int(t, v); }
PQW_FN void pqw_tc_double(pqw_tc *t, int id, double d) { pqw_tc_field(t, id, PQW_T_DOUBLE); pqw_tc_v_double(t, d); }
PQW_FN void pqw_tc_bin(pqw_tc *t, int id, const void *p, size_t n) { pqw_tc_field(t, id, PQW_T_BINARY); pqw_tc_v_bin(t, p, n); }
PQW_FN void pqw_tc_str(pqw_tc *t, int id, const char *s) { pqw_tc_bin(t, id, s, strlen(s)); }
PQW_FN void pqw_tc_bool(pqw_tc *t, int id, int v) { pqw_tc_field(t, id, v ? PQW_T_TRUE : PQW_T_FALSE); }
/* a struct field: header + begin; close with pqw_tc_end */
PQW_FN void pqw_tc_struct(pqw_tc *t, int id) { pqw_tc_field(t, id, PQW_T_STRUCT); pqw_tc_begin(t); }
/* list / set header (short form for n < 15, else 0xF0|etype + varint) */
PQW_FN void pqw_tc_list_hdr(pqw_tc *t, int etype, uint64_t n)
{
    if (n < 15) pqw_u8(t->b, (unsigned)((n << 4) | (uint64_t)etype));
    else { pqw_u8(t->b, 0xF0u | (unsigned)etype); pqw_uvarint(t->b, n); }
}
PQW_FN void pqw_tc_list(pqw_tc *t, int id, int etype, uint64_t n) { pqw_tc_field(t, id, PQW_T_LIST); pqw_tc_list_hdr(t, etype, n); }
PQW_FN void pqw_tc_map_hdr(pqw_tc *t, int ktype, int vtype, uint64_t n)
{
    pqw_uvarint(t->b, n);
    if (n) pqw_u8(t->b, (unsigned)((ktype << 4) | vtype));
}
PQW_FN void pqw_tc_raw(pqw_tc *t, const void *p, size_t n) { pqw_put(t->b, p, n); }

/* ---- overridable values ------------------------------------------------- */

/* mode 0: the writer's default; 1: write v; 2: leave the field out */
typedef struct pqw_i { int mode; int64_t v; } pqw_i;
PQW_FN pqw_i pqw_set(int64_t v) { pqw_i r; r.mode = 1; r.v = v; return r; }
PQW_FN pqw_i pqw_omit(void) { pqw_i r; r.mode = 2; r.v = 0; return r; }
/* resolves x with a default that is written; returns 1 when it is written */
PQW_FN int pqw_val(pqw_i x, int64_t dflt, int64_t *out)
{
    if (x.mode == 2) return 0;
    *out = x.mode == 1 ? x.v : dflt;
    return 1;
}
/* a field that is left out unless set */
PQW_FN int pqw_opt(pqw_i x, int64_t *out)
{
    if (x.mode != 1) return 0;
    *out = x.v;
    return 1;
}

/* appends fields (e.g. unknown ones) just before a struct's STOP */
typedef struct pqw_hook { void (*fn)(pqw_tc *t, void *ctx); void *ctx; } pqw_hook;
PQW_FN void pqw_run_hook(const pqw_hook *h, pqw_tc *t) { if (h->fn) h->fn(t, h->ctx); }

/* ---- model -------------------------------------------------------------- */

enum { PQW_DATA_PAGE = 0, PQW_INDEX_PAGE = 1, PQW_DICT_PAGE = 2, PQW_DATA_PAGE_V2 = 3 };
enum { PQW_BOOLEAN = 0, PQW_INT32 = 1, PQW_INT64 = 2, PQW_INT96 = 3, PQW_FLOAT = 4,
       PQW_DOUBLE = 5, PQW_BYTE_ARRAY = 6, PQW_FLBA = 7 };
enum { PQW_REQUIRED = 0, PQW_OPTIONAL = 1, PQW_REPEATED = 2 };
enum { PQW_PLAIN = 0, PQW_PLAIN_DICTIONARY = 2, PQW_RLE = 3, PQW_BIT_PACKED = 4,
       PQW_RLE_DICTIONARY = 8 };
enum { PQW_UNCOMPRESSED = 0, PQW_SNAPPY = 1, PQW_GZIP = 2, PQW_ZSTD = 6 };

typedef struct pqw_page {
    int32_t type;                      /* PageHeader.type */
    int32_t n;                         /* values (level entries) in the page:
                                          default num_values, summed for the chunk */
    const uint8_t *body; size_t body_len;  /* bytes after the header, as stored */
    size_t raw_len;                    /* uncompressed size (0: body_len) */
    int crc_auto;                      /* write the CRC32 of body */
    /* PageHeader */
    pqw_i type_field;                  /* default: type */
    pqw_i usize, csize, crc;           /* default: raw_len, body_len, omitted */
    int sub;                           /* sub-header: 0 by type, -1 none, else its field id (5, 7, 8) */
    /* DataPageHeader / DictionaryPageHeader / DataPageHeaderV2 */
    pqw_i num_values;                  /* default n */
    pqw_i encoding;                    /* default PLAIN */
    pqw_i def_enc, rep_enc;            /* v1, default RLE */
    pqw_i num_nulls, num_rows;         /* v2, default 0 / n */
    pqw_i def_len, rep_len;            /* v2, default 0 */
    pqw_i is_compressed;               /* v2, default omitted (true) */
    pqw_hook extra, extra_sub;         /* unknown fields in PageHeader / the sub-header */
    const uint8_t *header_raw; size_t header_raw_len; /* replaces the serialized header */
    /* filled by pqw_build */
    int64_t at, body_at, header_len;
} pqw_page;

typedef struct pqw_stats {
    const void *min, *max; size_t min_len, max_len;
    int has_min, has_max;
    pqw_i null_count, distinct_count;  /* default omitted */
} pqw_stats;

typedef struct pqw_chunk {
    pqw_page *pages; int npages;
    int32_t physical;                  /* ColumnMetaData.type */
    const char *path;                  /* path_in_schema, dotted */
    int32_t codec;
    uint32_t encodings;                /* bit mask; 0: derived from the pages */
    pqw_i type_field;                  /* default physical */
    pqw_i num_values;                  /* default: sum of the data pages' n */
    pqw_i total_uncompressed, total_compressed; /* default: from the pages */
    pqw_i data_page_offset;            /* default: first data page */
    pqw_i dictionary_page_offset;      /* default: the first page when it is a dictionary page */
    pqw_i index_page_offset;           /* default omitted */
    pqw_i file_offset;                 /* ColumnChunk.file_offset, default: chunk end */
    pqw_i codec_field;                 /* default codec */
    const char *file_path;             /* ColumnChunk.file_path */
    int no_meta;                       /* leave ColumnChunk.meta_data out */
    int crypto;                        /* write ColumnChunk.crypto_metadata (field 8) */
    const pqw_stats *stats;
    pqw_hook extra_chunk, extra_meta;
    /* filled by pqw_build */
    int64_t start, end;
} pqw_chunk;

typedef struct pqw_schema {
    const char *name;                  /* NULL: no name field */
    pqw_i type, type_length, repetition, num_children, converted_type;
    pqw_i scale, precision, field_id;  /* all default omitted */
    int logical;                       /* LogicalType member id (1 STRING ...), 0 none */
    pqw_hook logical_body;             /* fields inside the member struct */
    pqw_hook extra;
} pqw_schema;

typedef struct pqw_rowgroup {
    pqw_chunk *chunks; int nchunks;
    pqw_i num_rows;                    /* default: first chunk's num_values */
    pqw_i total_byte_size;             /* default: sum of uncompressed sizes */
    pqw_i ncolumns;                    /* list length written (default nchunks) */
    pqw_hook extra;
} pqw_rowgroup;

typedef struct pqw_file {
    pqw_schema *schema; int nschema;
    pqw_rowgroup *rgs; int nrgs;
    pqw_i version;                     /* default 1 */
    pqw_i num_rows;                    /* default: sum of the row groups' */
    const char *created_by;
    pqw_hook extra;
    const uint8_t *footer_raw; size_t footer_raw_len; /* replaces FileMetaData */
    pqw_i footer_len;                  /* the 4-byte length (default: actual) */
    const char *head_magic, *tail_magic; /* 4 bytes each, default "PAR1" */
    /* filled by pqw_build */
    int64_t footer_at, footer_size;
} pqw_file;

PQW_FN pqw_schema pqw_root(int nchildren)
{
    pqw_schema s;
    memset(&s, 0, sizeof s);
    s.name = "schema"; s.num_children = pqw_set(nchildren);
    return s;
}
PQW_FN pqw_schema pqw_leaf(const char *name, int32_t type, int32_t repetition)
{
    pqw_schema s;
    memset(&s, 0, sizeof s);
    s.name = name; s.type = pqw_set(type); s.repetition = pqw_set(repetition);
    return s;
}
PQW_FN pqw_schema pqw_group(const char *name, int nchildren, int32_t repetition)
{
    pqw_schema s;
    memset(&s, 0, sizeof s);
    s.name = name; s.num_children = pqw_set(nchildren); s.repetition = pqw_set(repetition);
    return s;
}
PQW_FN pqw_page pqw_data_page(const pqw_buf *body, int32_t n, int32_t encoding)
{
    pqw_page p;
    memset(&p, 0, sizeof p);
    p.type = PQW_DATA_PAGE; p.n = n; p.body = body->p; p.body_len = body->n;
    p.encoding = pqw_set(encoding);
    return p;
}
PQW_FN pqw_page pqw_dict_page(const pqw_buf *body, int32_t n)
{
    pqw_page p;
    memset(&p, 0, sizeof p);
    p.type = PQW_DICT_PAGE; p.n = n; p.body = body->p; p.body_len = body->n;
    return p;
}
PQW_FN pqw_page pqw_v2_page(const pqw_buf *body, int32_t n, int32_t encoding, int32_t num_nulls,
                            int32_t def_len, int32_t rep_len)
{
    pqw_page p;
    memset(&p, 0, sizeof p);
    p.type = PQW_DATA_PAGE_V2; p.n = n; p.body = body->p; p.body_len = body->n;
    p.encoding = pqw_set(encoding); p.num_nulls = pqw_set(num_nulls);
    p.def_len = pqw_set(def_len); p.rep_len = pqw_set(rep_len);
    return p;
}

/* ---- serialization ------------------------------------------------------ */

PQW_FN void pqw_write_page_header(pqw_tc *t, const pqw_page *pg)
{
    int64_t v;
    int sub = pg->sub;
    pqw_tc_begin(t);
    if (pqw_val(pg->type_field, pg->type, &v)) pqw_tc_i32(t, 1, v);
    if (pqw_val(pg->usize, (int64_t)(pg->raw_len ? pg->raw_len : pg->body_len), &v)) pqw_tc_i32(t, 2, v);
    if (pqw_val(pg->csize, (int64_t)pg->body_len, &v)) pqw_tc_i32(t, 3, v);
    if (pg->crc_auto) pqw_tc_i32(t, 4, (int32_t)pqw_crc32(pg->body, pg->body_len));
    else if (pqw_opt(pg->crc, &v)) pqw_tc_i32(t, 4, (int32_t)(uint32_t)v);
    if (sub == 0) sub = pg->type == PQW_DATA_PAGE ? 5 : pg->type == PQW_DICT_PAGE ? 7 : pg->type == PQW_DATA_PAGE_V2 ? 8 : -1;
    if (sub == 5) {
        pqw_tc_struct(t, 5);
        if (pqw_val(pg->num_values, pg->n, &v)) pqw_tc_i32(t, 1, v);
        if (pqw_val(pg->encoding, PQW_PLAIN, &v)) pqw_tc_i32(t, 2, v);
        if (pqw_val(pg->def_enc, PQW_RLE, &v)) pqw_tc_i32(t, 3, v);
        if (pqw_val(pg->rep_enc, PQW_RLE, &v)) pqw_tc_i32(t, 4, v);
        pqw_run_hook(&pg->extra_sub, t);
        pqw_tc_end(t);
    } else if (sub == 7) {
        pqw_tc_struct(t, 7);
        if (pqw_val(pg->num_values, pg->n, &v)) pqw_tc_i32(t, 1, v);
        if (pqw_val(pg->encoding, PQW_PLAIN, &v)) pqw_tc_i32(t, 2, v);
        pqw_run_hook(&pg->extra_sub, t);
        pqw_tc_end(t);
    } else if (sub == 8) {
        pqw_tc_struct(t, 8);
        if (pqw_val(pg->num_values, pg->n, &v)) pqw_tc_i32(t, 1, v);
        if (pqw_val(pg->num_nulls, 0, &v)) pqw_tc_i32(t, 2, v);
        if (pqw_val(pg->num_rows, pg->n, &v)) pqw_tc_i32(t, 3, v);
        if (pqw_val(pg->encoding, PQW_PLAIN, &v)) pqw_tc_i32(t, 4, v);
        if (pqw_val(pg->def_len, 0, &v)) pqw_tc_i32(t, 5, v);
        if (pqw_val(pg->rep_len, 0, &v)) pqw_tc_i32(t, 6, v);
        if (pqw_opt(pg->is_compressed, &v)) pqw_tc_bool(t, 7, (int)v);
        pqw_run_hook(&pg->extra_sub, t);
        pqw_tc_end(t);
    }
    pqw_run_hook(&pg->extra, t);
    pqw_tc_end(t);
}

/* writes the pages of one chunk at the end of out */
PQW_FN void pqw_write_chunk_pages(pqw_buf *out, pqw_chunk *ch)
{
    int i;
    ch->start = (int64_t)out->n;
    for (i = 0; i < ch->npages; i++) {
        pqw_page *pg = &ch->pages[i];
        pg->at = (int64_t)out->n;
        if (pg->header_raw) pqw_put(out, pg->header_raw, pg->header_raw_len);
        else { pqw_tc t; pqw_tc_init(&t, out); pqw_write_page_header(&t, pg); }
        pg->body_at = (int64_t)out->n;
        pg->header_len = pg->body_at - pg->at;
        pqw_put(out, pg->body, pg->body_len);
    }
    ch->end = (int64_t)out->n;
}

PQW_FN int64_t pqw_chunk_num_values(const pqw_chunk *ch)
{
    int64_t v = 0; int i;
    if (ch->num_values.mode == 1) return ch->num_values.v;
    for (i = 0; i < ch->npages; i++)
        if (ch->pages[i].type == PQW_DATA_PAGE || ch->pages[i].type == PQW_DATA_PAGE_V2) v += (int64_t)ch->pages[i].n;
    return v;
}

PQW_FN void pqw_write_stats(pqw_tc *t, const pqw_stats *s)
{
    int64_t v;
    pqw_tc_struct(t, 12);
    if (pqw_opt(s->null_count, &v)) pqw_tc_i64(t, 3, v);
    if (pqw_opt(s->distinct_count, &v)) pqw_tc_i64(t, 4, v);
    if (s->has_max) pqw_tc_bin(t, 5, s->max, s->max_len);
    if (s->has_min) pqw_tc_bin(t, 6, s->min, s->min_len);
    pqw_tc_end(t);
}

PQW_FN void pqw_write_column_chunk(pqw_tc *t, const pqw_chunk *ch)
{
    int64_t v;
    int i;
    pqw_tc_begin(t);
    if (ch->file_path) pqw_tc_str(t, 1, ch->file_path);
    pqw_tc_i64(t, 2, pqw_val(ch->file_offset, ch->end, &v) ? v : 0);
    if (!ch->no_meta) {
        uint32_t enc = ch->encodings;
        int64_t first_data = -1, dict = -1, unc = 0;
        int nenc = 0, e;
        for (i = 0; i < ch->npages; i++) {
            const pqw_page *pg = &ch->pages[i];
            int64_t pe = pg->encoding.mode == 1 ? pg->encoding.v : PQW_PLAIN;
            unc += pg->header_len + (int64_t)(pg->raw_len ? pg->raw_len : pg->body_len);
            if ((pg->type == PQW_DATA_PAGE || pg->type == PQW_DATA_PAGE_V2) && first_data < 0) first_data = pg->at;
            if (pg->type == PQW_DICT_PAGE && i == 0) dict = pg->at;
            if (!ch->encodings) {
                if (pe >= 0 && pe < 32) enc |= 1u << pe;
                if (pg->type == PQW_DATA_PAGE) enc |= 1u << PQW_RLE;
            }
        }
        if (first_data < 0) first_data = ch->start;
        pqw_tc_struct(t, 3);
        if (pqw_val(ch->type_field, ch->physical, &v)) pqw_tc_i32(t, 1, v);
        for (e = 0; e < 32; e++) if (enc & (1u << e)) nenc++;
        pqw_tc_list(t, 2, PQW_T_I32, (uint64_t)nenc);
        for (e = 0; e < 32; e++) if (enc & (1u << e)) pqw_tc_v_int(t, e);
        {
            const char *path = ch->path ? ch->path : "x";
            const char *s = path;
            int nparts = 1;
            for (s = path; *s; s++) nparts += *s == '.';
            pqw_tc_list(t, 3, PQW_T_BINARY, (uint64_t)nparts);
            s = path;
            for (;;) {
                const char *dot = strchr(s, '.');
                size_t len = dot ? (size_t)(dot - s) : strlen(s);
                pqw_tc_v_bin(t, s, len);
                if (!dot) break;
                s = dot + 1;
            }
        }
        if (pqw_val(ch->codec_field, ch->codec, &v)) pqw_tc_i32(t, 4, v);
        if (pqw_val(ch->num_values, pqw_chunk_num_values(ch), &v)) pqw_tc_i64(t, 5, v);
        if (pqw_val(ch->total_uncompressed, unc, &v)) pqw_tc_i64(t, 6, v);
        if (pqw_val(ch->total_compressed, ch->end - ch->start, &v)) pqw_tc_i64(t, 7, v);
        if (pqw_val(ch->data_page_offset, first_data, &v)) pqw_tc_i64(t, 9, v);
        if (pqw_opt(ch->index_page_offset, &v)) pqw_tc_i64(t, 10, v);
        if (ch->dictionary_page_offset.mode == 1) pqw_tc_i64(t, 11, ch->dictionary_page_offset.v);
        else if (ch->dictionary_page_offset.mode == 0 && dict >= 0) pqw_tc_i64(t, 11, dict);
        if (ch->stats) pqw_write_stats(t, ch->stats);
        pqw_run_hook(&ch->extra_meta, t);
        pqw_tc_end(t);
    }
    if (ch->crypto) {
        /* ColumnCryptoMetaData union: ENCRYPTION_WITH_FOOTER_KEY (1), empty */
        pqw_tc_struct(t, 8);
        pqw_tc_struct(t, 1);
        pqw_tc_end(t);
        pqw_tc_end(t);
    }
    pqw_run_hook(&ch->extra_chunk, t);
    pqw_tc_end(t);
}

PQW_FN void pqw_write_schema_element(pqw_tc *t, const pqw_schema *s)
{
    int64_t v;
    pqw_tc_begin(t);
    if (pqw_opt(s->type, &v)) pqw_tc_i32(t, 1, v);
    if (pqw_opt(s->type_length, &v)) pqw_tc_i32(t, 2, v);
    if (pqw_opt(s->repetition, &v)) pqw_tc_i32(t, 3, v);
    if (s->name) pqw_tc_str(t, 4, s->name);
    if (pqw_opt(s->num_children, &v)) pqw_tc_i32(t, 5, v);
    if (pqw_opt(s->converted_type, &v)) pqw_tc_i32(t, 6, v);
    if (pqw_opt(s->scale, &v)) pqw_tc_i32(t, 7, v);
    if (pqw_opt(s->precision, &v)) pqw_tc_i32(t, 8, v);
    if (pqw_opt(s->field_id, &v)) pqw_tc_i32(t, 9, v);
    if (s->logical) {
        pqw_tc_struct(t, 10);
        pqw_tc_struct(t, s->logical);
        pqw_run_hook(&s->logical_body, t);
        pqw_tc_end(t);
        pqw_tc_end(t);
    }
    pqw_run_hook(&s->extra, t);
    pqw_tc_end(t);
}

PQW_FN int64_t pqw_rg_num_rows(const pqw_rowgroup *rg)
{
    if (rg->num_rows.mode == 1) return rg->num_rows.v;
    return rg->nchunks > 0 ? pqw_chunk_num_values(&rg->chunks[0]) : 0;
}

/* serializes FileMetaData (chunk offsets must be known: pqw_build) */
PQW_FN void pqw_write_file_meta(pqw_tc *t, const pqw_file *f)
{
    int64_t v, total = 0;
    int i, j;
    /* wraps (no overflow) when the row counts are set to absurd values */
    for (i = 0; i < f->nrgs; i++) total = (int64_t)((uint64_t)total + (uint64_t)pqw_rg_num_rows(&f->rgs[i]));
    pqw_tc_begin(t);
    if (pqw_val(f->version, 1, &v)) pqw_tc_i32(t, 1, v);
    pqw_tc_list(t, 2, PQW_T_STRUCT, (uint64_t)f->nschema);
    for (i = 0; i < f->nschema; i++) pqw_write_schema_element(t, &f->schema[i]);
    if (pqw_val(f->num_rows, total, &v)) pqw_tc_i64(t, 3, v);
    pqw_tc_list(t, 4, PQW_T_STRUCT, (uint64_t)f->nrgs);
    for (i = 0; i < f->nrgs; i++) {
        const pqw_rowgroup *rg = &f->rgs[i];
        int64_t bytes = 0;
        pqw_tc_begin(t);
        pqw_tc_list(t, 1, PQW_T_STRUCT, (uint64_t)(rg->ncolumns.mode == 1 ? rg->ncolumns.v : rg->nchunks));
        for (j = 0; j < rg->nchunks; j++) {
            pqw_write_column_chunk(t, &rg->chunks[j]);
            bytes += rg->chunks[j].end - rg->chunks[j].start;
        }
        if (pqw_val(rg->total_byte_size, bytes, &v)) pqw_tc_i64(t, 2, v);
        if (pqw_val(rg->num_rows, pqw_rg_num_rows(rg), &v)) pqw_tc_i64(t, 3, v);
        pqw_run_hook(&rg->extra, t);
        pqw_tc_end(t);
    }
    if (f->created_by) pqw_tc_str(t, 6, f->created_by);
    pqw_run_hook(&f->extra, t);
    pqw_tc_end(t);
}

/* The whole file: head magic, every chunk's pages (row group by row group),
   FileMetaData, its length, tail magic. out is appended to. */
PQW_FN void pqw_build(pqw_file *f, pqw_buf *out)
{
    int i, j;
    size_t base = out->n;
    int64_t flen;
    pqw_put(out, f->head_magic ? f->head_magic : "PAR1", 4);
    for (i = 0; i < f->nrgs; i++)
        for (j = 0; j < f->rgs[i].nchunks; j++) pqw_write_chunk_pages(out, &f->rgs[i].chunks[j]);
    f->footer_at = (int64_t)(out->n - base);
    if (f->footer_raw) pqw_put(out, f->footer_raw, f->footer_raw_len);
    else { pqw_tc t; pqw_tc_init(&t, out); pqw_write_file_meta(&t, f); }
    f->footer_size = (int64_t)(out->n - base) - f->footer_at;
    pqw_le32(out, (uint32_t)(pqw_val(f->footer_len, f->footer_size, &flen) ? flen : f->footer_size));
    pqw_put(out, f->tail_magic ? f->tail_magic : "PAR1", 4);
}

/* One leaf column under the root in one row group: wires the given arrays
   together (sch must hold 2 elements). */
PQW_FN void pqw_simple(pqw_file *f, pqw_schema *sch, pqw_rowgroup *rg, pqw_chunk *ch,
                       const char *name, int32_t type, int32_t repetition, pqw_page *pages, int npages)
{
    memset(f, 0, sizeof *f); memset(rg, 0, sizeof *rg); memset(ch, 0, sizeof *ch);
    sch[0] = pqw_root(1);
    sch[1] = pqw_leaf(name, type, repetition);
    ch->pages = pages; ch->npages = npages; ch->physical = type; ch->path = name;
    rg->chunks = ch; rg->nchunks = 1;
    f->schema = sch; f->nschema = 2; f->rgs = rg; f->nrgs = 1;
}

/* ---- RLE / bit-packed hybrid -------------------------------------------- */

PQW_FN void pqw_rle_run(pqw_buf *b, uint32_t value, uint64_t count, int bw)
{
    int i;
    pqw_uvarint(b, count << 1);
    for (i = 0; i < (bw + 7) / 8; i++) pqw_u8(b, (value >> (8 * i)) & 0xFF);
}
/* packs n values LSB-first with bw bits each (no header) */
PQW_FN void pqw_pack_lsb(pqw_buf *b, const uint32_t *vals, size_t n, int bw)
{
    uint64_t acc = 0;
    int nbits = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t v = bw >= 32 ? vals[i] : (vals[i] & ((1ull << bw) - 1));
        acc |= v << nbits;
        nbits += bw;
        while (nbits >= 8) { pqw_u8(b, (unsigned)(acc & 0xFF)); acc >>= 8; nbits -= 8; }
    }
    if (nbits > 0) pqw_u8(b, (unsigned)(acc & 0xFF));
}
/* a bit-packed run of ngroups*8 values (vals must hold that many) */
PQW_FN void pqw_bp_run(pqw_buf *b, const uint32_t *vals, uint64_t ngroups, int bw)
{
    pqw_uvarint(b, (ngroups << 1) | 1);
    pqw_pack_lsb(b, vals, (size_t)ngroups * 8, bw);
}
/* the hybrid encoding of n values: RLE for runs of 8 or more equal values,
   bit-packed groups of 8 (the last padded with zeros) otherwise */
PQW_FN void pqw_hybrid(pqw_buf *b, const uint32_t *vals, size_t n, int bw)
{
    size_t i = 0;
    while (i < n) {
        size_t r = 1;
        while (i + r < n && vals[i + r] == vals[i]) r++;
        if (r >= 8) { pqw_rle_run(b, vals[i], r, bw); i += r; continue; }
        {   /* bit-pack groups of 8 until a long run starts at a group boundary */
            size_t j = i, groups, k;
            uint32_t *tmp;
            for (;;) {
                size_t rr = 1;
                j += 8;
                if (j >= n) { j = n; break; }
                while (j + rr < n && vals[j + rr] == vals[j]) rr++;
                if (rr >= 8) break;
            }
            groups = (j - i + 7) / 8;
            tmp = (uint32_t *)calloc(groups * 8, sizeof *tmp);
            if (!tmp) abort();
            for (k = i; k < j; k++) tmp[k - i] = vals[k];
            pqw_bp_run(b, tmp, groups, bw);
            free(tmp);
            i = j;
        }
    }
}
/* deprecated BIT_PACKED (levels): MSB-first, no header */
PQW_FN void pqw_pack_msb(pqw_buf *b, const uint32_t *vals, size_t n, int bw)
{
    uint32_t acc = 0;
    int nbits = 0, k;
    size_t i;
    for (i = 0; i < n; i++)
        for (k = bw - 1; k >= 0; k--) {
            acc = (acc << 1) | ((vals[i] >> k) & 1u);
            if (++nbits == 8) { pqw_u8(b, acc); acc = 0; nbits = 0; }
        }
    if (nbits) pqw_u8(b, acc << (8 - nbits));
}
/* v1 levels: 4-byte length + hybrid */
PQW_FN void pqw_levels_v1(pqw_buf *b, const uint32_t *lv, size_t n, int bw)
{
    size_t at = b->n;
    pqw_le32(b, 0);
    pqw_hybrid(b, lv, n, bw);
    pqw_set_le32(b, at, (uint32_t)(b->n - at - 4));
}
/* dictionary indices: bit width byte + hybrid */
PQW_FN void pqw_dict_indices(pqw_buf *b, const uint32_t *idx, size_t n, int bw)
{
    pqw_u8(b, (unsigned)bw);
    pqw_hybrid(b, idx, n, bw);
}

/* A data page of a nested column: n level entries (repetition levels of bit
   width rbw, definition levels of width dbw), then the value bytes. v1:
   each level section is RLE with its 4-byte length; v2: bare hybrid
   sections whose lengths go in the header (num_rows: the entries with
   repetition level 0). body is reset; the page points into it. */
PQW_FN pqw_page pqw_nested_page(pqw_buf *body, const uint32_t *rep, const uint32_t *def, size_t n,
                                int rbw, int dbw, const pqw_buf *values, int v2)
{
    pqw_page pg;
    size_t i, rows = 0, rl;
    body->n = 0;
    for (i = 0; i < n; i++) rows += rep[i] == 0;
    if (v2) {
        pqw_hybrid(body, rep, n, rbw);
        rl = body->n;
        pqw_hybrid(body, def, n, dbw);
        if (values) pqw_append(body, values);
        pg = pqw_v2_page(body, (int32_t)n, PQW_PLAIN, 0, (int32_t)(body->n - rl - (values ? values->n : 0)), (int32_t)rl);
        pg.num_rows = pqw_set((int64_t)rows);
    } else {
        pqw_levels_v1(body, rep, n, rbw);
        pqw_levels_v1(body, def, n, dbw);
        if (values) pqw_append(body, values);
        pg = pqw_data_page(body, (int32_t)n, PQW_PLAIN);
    }
    return pg;
}

/* ---- PLAIN -------------------------------------------------------------- */

PQW_FN void pqw_plain_i32(pqw_buf *b, const int32_t *v, size_t n) { size_t i; for (i = 0; i < n; i++) pqw_le32(b, (uint32_t)v[i]); }
PQW_FN void pqw_plain_i64(pqw_buf *b, const int64_t *v, size_t n) { size_t i; for (i = 0; i < n; i++) pqw_le64(b, (uint64_t)v[i]); }
PQW_FN void pqw_plain_float(pqw_buf *b, const float *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) { uint32_t u; memcpy(&u, &v[i], 4); pqw_le32(b, u); }
}
PQW_FN void pqw_plain_double(pqw_buf *b, const double *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) { uint64_t u; memcpy(&u, &v[i], 8); pqw_le64(b, u); }
}
/* BOOLEAN: one bit per value, LSB first */
PQW_FN void pqw_plain_bool(pqw_buf *b, const uint8_t *v, size_t n)
{
    size_t i;
    uint32_t *tmp = (uint32_t *)calloc(n ? n : 1, sizeof *tmp);
    if (!tmp) abort();
    for (i = 0; i < n; i++) tmp[i] = v[i] ? 1 : 0;
    pqw_pack_lsb(b, tmp, n, 1);
    free(tmp);
}
PQW_FN void pqw_plain_ba1(pqw_buf *b, const void *p, size_t len) { pqw_le32(b, (uint32_t)len); pqw_put(b, p, len); }
PQW_FN void pqw_plain_str(pqw_buf *b, const char *const *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) pqw_plain_ba1(b, s[i], strlen(s[i]));
}
PQW_FN void pqw_plain_flba(pqw_buf *b, const void *p, size_t n, size_t width) { pqw_put(b, p, n * width); }
PQW_FN void pqw_plain_int96(pqw_buf *b, uint64_t nanos_of_day, uint32_t julian_day)
{
    pqw_le64(b, nanos_of_day); pqw_le32(b, julian_day);
}

/* ---- SNAPPY ------------------------------------------------------------- */

PQW_FN void pqw_snappy_lit(pqw_buf *b, const uint8_t *p, size_t n)
{
    while (n) {
        size_t len = n > 65536 ? 65536 : n, m = len - 1;
        if (m < 60) pqw_u8(b, (unsigned)(m << 2));
        else if (m < 256) { pqw_u8(b, 60 << 2); pqw_u8(b, (unsigned)m); }
        else { pqw_u8(b, 61 << 2); pqw_le16(b, (uint32_t)m); }
        pqw_put(b, p, len);
        p += len; n -= len;
    }
}
/* one copy op; picks the 1-, 2- or 4-byte offset form */
PQW_FN void pqw_snappy_copy(pqw_buf *b, uint32_t off, uint32_t len)
{
    while (len) {
        uint32_t l = len > 64 ? 64 : len;
        if (len > 64 && len - 64 < 4) l = 60; /* keep the tail at 4 or more */
        if (l >= 4 && l <= 11 && off < 2048) {
            pqw_u8(b, 1u | ((l - 4) << 2) | ((off >> 8) << 5)); pqw_u8(b, off & 0xFF);
        } else if (off < 65536) {
            pqw_u8(b, 2u | ((l - 1) << 2)); pqw_le16(b, off);
        } else {
            pqw_u8(b, 3u | ((l - 1) << 2)); pqw_le32(b, off);
        }
        len -= l;
    }
}
/* a whole stream of literals only */
PQW_FN void pqw_snappy_literal(pqw_buf *b, const uint8_t *p, size_t n)
{
    pqw_uvarint(b, n);
    pqw_snappy_lit(b, p, n);
}
/* greedy compressor (hash of 4 bytes): the elements of p[0, n), copies
   from at most `reach` bytes back */
PQW_FN void pqw_snappy_elements(pqw_buf *b, const uint8_t *p, size_t n, size_t reach)
{
    enum { HBITS = 14 };
    int64_t *tab = (int64_t *)malloc(sizeof(int64_t) << HBITS);
    size_t i = 0, lit = 0, k;
    if (!tab) abort();
    for (k = 0; k < ((size_t)1 << HBITS); k++) tab[k] = -1;
    while (i + 4 <= n) {
        uint32_t w, h;
        int64_t cand;
        memcpy(&w, p + i, 4);
        h = (w * 2654435761u) >> (32 - HBITS);
        cand = tab[h];
        tab[h] = (int64_t)i;
        if (cand >= 0 && i - (size_t)cand <= reach && memcmp(p + cand, p + i, 4) == 0) {
            size_t m = 4;
            while (i + m < n && p[(size_t)cand + m] == p[i + m]) m++;
            if (lit < i) pqw_snappy_lit(b, p + lit, i - lit);
            pqw_snappy_copy(b, (uint32_t)(i - (size_t)cand), (uint32_t)m);
            i += m; lit = i;
        } else i++;
    }
    if (lit < n) pqw_snappy_lit(b, p + lit, n - lit);
    free(tab);
}
/* a whole stream, copies from any distance */
PQW_FN void pqw_snappy_compress(pqw_buf *b, const uint8_t *p, size_t n)
{
    pqw_uvarint(b, n);
    pqw_snappy_elements(b, p, n, (size_t)-1);
}
/* a whole stream as real writers make it: 64 KiB blocks compressed on
   their own, so no copy reaches into an earlier block */
PQW_FN void pqw_snappy_compress_blocks(pqw_buf *b, const uint8_t *p, size_t n)
{
    size_t at;
    pqw_uvarint(b, n);
    for (at = 0; at < n; at += 65536) pqw_snappy_elements(b, p + at, n - at < 65536 ? n - at : 65536, 65536);
}

#endif /* PQ_WRITER_H */
