#!/usr/bin/env python3
"""Writes the hand-made seed files of tests/fuzz/ (small Parquet files that
reach the rarer paths of gpufeed.h: deprecated BIT_PACKED levels, RLE
booleans, bit width 0 dictionary indices, index/unknown pages, v2 pages with
is_compressed=false, every SNAPPY tag kind, all logical annotations,
statistics, key/value metadata, empty row groups, nested and repeated
schemas, an encrypted footer). Standard library only; deterministic.

    python3 tests/fuzz/make_seeds.py tests/fuzz

The fuzz replay also reads this script as an input (it is not Parquet and
is rejected at once), which is harmless.
"""
import os
import struct
import sys
import zlib

# ---- Thrift compact protocol writer ------------------------------------------
T_TRUE, T_FALSE, T_I8, T_I16, T_I32, T_I64, T_DOUBLE, T_BIN, T_LIST, T_SET, T_MAP, T_STRUCT = range(1, 13)


def uvar(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zz(n):
    return uvar((n << 1) ^ (n >> 63))


class S:
    """A struct: a list of (field id, kind, value)."""

    def __init__(self, *fields):
        self.fields = [f for f in fields if f is not None]

    def enc(self):
        out = bytearray()
        last = 0
        for fid, kind, val in self.fields:
            if kind == 'bool':
                t = T_TRUE if val else T_FALSE
            else:
                t = {'i8': T_I8, 'i16': T_I16, 'i32': T_I32, 'i64': T_I64, 'dbl': T_DOUBLE, 'bin': T_BIN,
                     'list': T_LIST, 'struct': T_STRUCT}[kind]
            d = fid - last
            if 0 < d <= 15:
                out.append((d << 4) | t)
            else:
                out.append(t)
                out += zz(fid)
            last = fid
            if kind == 'bool':
                pass
            elif kind == 'i8':
                out += struct.pack('<b', val)
            elif kind in ('i16', 'i32', 'i64'):
                out += zz(val)
            elif kind == 'dbl':
                out += struct.pack('<d', val)
            elif kind == 'bin':
                v = val.encode() if isinstance(val, str) else val
                out += uvar(len(v)) + v
            elif kind == 'struct':
                out += val.enc()
            elif kind == 'list':
                et, items = val
                n = len(items)
                out.append((n << 4) | et if n < 15 else 0xF0 | et)
                if n >= 15:
                    out += uvar(n)
                for it in items:
                    if et in (T_I32, T_I64, T_I16):
                        out += zz(it)
                    elif et == T_BIN:
                        v = it.encode() if isinstance(it, str) else it
                        out += uvar(len(v)) + v
                    elif et == T_STRUCT:
                        out += it.enc()
                    else:
                        raise ValueError(et)
        out.append(0)
        return bytes(out)


def i32(fid, v):
    return None if v is None else (fid, 'i32', v)


def i64(fid, v):
    return None if v is None else (fid, 'i64', v)


def bn(fid, v):
    return None if v is None else (fid, 'bin', v)


def st(fid, v):
    return None if v is None else (fid, 'struct', v)


# ---- Parquet enums --------------------------------------------------------------
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FLBA = range(8)
REQ, OPT, REP = 0, 1, 2
PLAIN, PLAIN_DICT, RLE, BIT_PACKED, RLE_DICT = 0, 2, 3, 4, 8
UNCOMPRESSED, SNAPPY = 0, 1
DATA_PAGE, INDEX_PAGE, DICT_PAGE, DATA_PAGE_V2 = 0, 1, 2, 3


def schema_el(name, typ=None, rep=None, children=None, tlen=None, conv=None, scale=None, prec=None,
              fid=None, logical=None):
    return S(i32(1, typ), i32(2, tlen), i32(3, rep), bn(4, name), i32(5, children), i32(6, conv),
             i32(7, scale), i32(8, prec), i32(9, fid), st(10, logical))


# ---- encoders --------------------------------------------------------------------
def bitpack_lsb(vals, bw):
    acc, nbits, out = 0, 0, bytearray()
    for v in vals:
        acc |= v << nbits
        nbits += bw
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8
    if nbits:
        out.append(acc & 0xFF)
    return bytes(out)


def bitpack_msb(vals, bw):
    bits = ''.join(format(v, '0%db' % bw) if bw else '' for v in vals)
    bits += '0' * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def rle_hybrid(vals, bw, mode='mixed'):
    """RLE/bit-packed hybrid: runs of 8+ equal values as RLE, the rest bit-packed."""
    out = bytearray()
    nb = (bw + 7) // 8
    i = 0
    lit = []

    def flush_lit():
        nonlocal lit
        if not lit:
            return
        pad = lit + [0] * (-len(lit) % 8)
        out.extend(uvar(((len(pad) // 8) << 1) | 1))
        out.extend(bitpack_lsb(pad, bw))
        lit = []

    while i < len(vals):
        j = i
        while j < len(vals) and vals[j] == vals[i]:
            j += 1
        if mode != 'packed' and (j - i >= 8 or mode == 'rle') and len(lit) % 8 == 0:
            flush_lit()
            out.extend(uvar((j - i) << 1))
            out.extend(vals[i].to_bytes(nb, 'little') if nb else b'')
            i = j
        else:
            lit.append(vals[i])
            i += 1
    flush_lit()
    return bytes(out)


def plain(typ, vals, tlen=None):
    if typ == BOOLEAN:
        return bitpack_lsb([1 if v else 0 for v in vals], 1)
    if typ == INT32:
        return b''.join(struct.pack('<i', v) for v in vals)
    if typ == INT64:
        return b''.join(struct.pack('<q', v) for v in vals)
    if typ == INT96:
        return b''.join(struct.pack('<qi', ns, jd) for ns, jd in vals)
    if typ == FLOAT:
        return b''.join(struct.pack('<f', v) for v in vals)
    if typ == DOUBLE:
        return b''.join(struct.pack('<d', v) for v in vals)
    if typ == BYTE_ARRAY:
        return b''.join(struct.pack('<I', len(v)) + v for v in vals)
    if typ == FLBA:
        assert all(len(v) == tlen for v in vals)
        return b''.join(vals)
    raise ValueError(typ)


def snappy_compress(data):
    """A SNAPPY stream that uses literals of every length form and copies
    with 1-, 2- and 4-byte offsets (deterministic, not a good compressor)."""
    out = bytearray(uvar(len(data)))
    i, n, kind = 0, len(data), 0
    while i < n:
        # a copy where the next bytes repeat earlier output
        best_len, best_off = 0, 0
        for off in (1, 2, 3, 4, 8, 12, 16, 24, 100, 2047, 3000):
            if off > i:
                continue
            ln = 0
            while i + ln < n and ln < 64 and data[i + ln] == data[i + ln - off]:
                ln += 1
            if ln > best_len:
                best_len, best_off = ln, off
        if best_len >= 4:
            ln, off = best_len, best_off
            kind += 1
            if ln <= 11 and off < 2048 and kind % 3 == 0:
                out.append(1 | ((ln - 4) << 2) | ((off >> 8) << 5))
                out.append(off & 0xFF)
            elif kind % 3 == 1 or off >= 65536:
                out.append(3 | ((ln - 1) << 2))
                out += struct.pack('<I', off)
            else:
                out.append(2 | ((ln - 1) << 2))
                out += struct.pack('<H', off)
            i += ln
            continue
        # a literal up to the next repeat (at most 300 bytes)
        j = i + 1
        while j < n and j - i < 300 and not (j >= 4 and data[j:j + 4] == data[j - 4:j]):
            j += 1
        lit = data[i:j]
        ln = len(lit) - 1
        if ln < 60:
            out.append(ln << 2)
        elif ln < 256:
            out.append(60 << 2)
            out.append(ln)
        else:
            out.append(61 << 2)
            out += struct.pack('<H', ln)
        out += lit
        i = j
    return bytes(out)


# ---- pages and files ----------------------------------------------------------------
def page_v1(values_bytes, nvalues, enc=PLAIN, def_bytes=b'', def_enc=RLE, codec=UNCOMPRESSED, crc=False,
            ptype=DATA_PAGE):
    body = def_bytes + values_bytes
    comp = snappy_compress(body) if codec == SNAPPY else body
    hdr = S(i32(1, ptype), i32(2, len(body)), i32(3, len(comp)),
            i32(4, struct.unpack('<i', struct.pack('<I', zlib.crc32(comp)))[0]) if crc else None,
            st(5, S(i32(1, nvalues), i32(2, enc), i32(3, def_enc), i32(4, RLE))))
    return hdr.enc() + comp


def page_dict(values_bytes, n, codec=UNCOMPRESSED, enc=PLAIN_DICT):
    comp = snappy_compress(values_bytes) if codec == SNAPPY else values_bytes
    return S(i32(1, DICT_PAGE), i32(2, len(values_bytes)), i32(3, len(comp)),
             st(7, S(i32(1, n), i32(2, enc)))).enc() + comp


def page_v2(values_bytes, nvalues, nnulls, nrows, enc=PLAIN, def_bytes=b'', codec=UNCOMPRESSED, is_compressed=True):
    vals = snappy_compress(values_bytes) if (codec == SNAPPY and is_compressed) else values_bytes
    body = def_bytes + vals
    return S(i32(1, DATA_PAGE_V2), i32(2, len(def_bytes) + len(values_bytes)), i32(3, len(body)),
             st(8, S(i32(1, nvalues), i32(2, nnulls), i32(3, nrows), i32(4, enc), i32(5, len(def_bytes)),
                     i32(6, 0), (7, 'bool', is_compressed)))).enc() + body


def page_other(ptype, payload=b'\x00' * 5):
    return S(i32(1, ptype), i32(2, len(payload)), i32(3, len(payload))).enc() + payload


class Chunk:
    def __init__(self, typ, pages, num_values, codec=UNCOMPRESSED, encodings=(PLAIN, RLE), has_dict=False,
                 stats=None, path=('c',)):
        self.typ, self.pages, self.num_values, self.codec = typ, pages, num_values, codec
        self.encodings, self.has_dict, self.stats, self.path = encodings, has_dict, stats, path


def parquet_file(schema, row_groups, num_rows=None, kv=None, created_by='gpufeed make_seeds.py', version=1):
    out = bytearray(b'PAR1')
    rgs = []
    for rows, chunks in row_groups:
        ccs = []
        for ch in chunks:
            start = len(out)
            for p in ch.pages:
                out += p
            size = len(out) - start
            md = S(i32(1, ch.typ), (2, 'list', (T_I32, list(ch.encodings))), (3, 'list', (T_BIN, list(ch.path))),
                   i32(4, ch.codec), i64(5, ch.num_values), i64(6, size), i64(7, size), i64(9, start),
                   i64(11, start if ch.has_dict else None), st(12, ch.stats))
            ccs.append(S(i64(2, start), st(3, md)))
        rgs.append(S((1, 'list', (T_STRUCT, ccs)), i64(2, 0), i64(3, rows)))
    total = sum(r for r, _ in row_groups) if num_rows is None else num_rows
    fmd = S(i32(1, version), (2, 'list', (T_STRUCT, schema)), i64(3, total), (4, 'list', (T_STRUCT, rgs)),
            (5, 'list', (T_STRUCT, [S(bn(1, k), bn(2, v)) for k, v in (kv or [])])) if kv is not None else None,
            bn(6, created_by))
    foot = fmd.enc()
    out += foot + struct.pack('<I', len(foot)) + b'PAR1'
    return bytes(out)


def root(n):
    return schema_el('schema', children=n)


# ---- the seeds ----------------------------------------------------------------------
def seeds():
    s = {}
    n = 20
    ints = [i * 7 - 50 for i in range(n)]
    # 1. every physical type, PLAIN, required, uncompressed, one V1 page each
    cols = [(BOOLEAN, [i % 3 == 0 for i in range(n)], None), (INT32, ints, None),
            (INT64, [v * 1000000007 for v in ints], None), (INT96, [(i * 3600 * 10**9, 2440588 + i) for i in range(n)], None),
            (FLOAT, [v / 4 for v in ints], None), (DOUBLE, [v / 8 for v in ints], None),
            (BYTE_ARRAY, [b'v%d' % i * (i % 4) for i in range(n)], None), (FLBA, [struct.pack('<I', i) for i in range(n)], 4)]
    schema = [root(len(cols))] + [schema_el('c%d' % k, typ=t, rep=REQ, tlen=tl) for k, (t, _, tl) in enumerate(cols)]
    chunks = [Chunk(t, [page_v1(plain(t, v, tl), n)], n, path=('c%d' % k,)) for k, (t, v, tl) in enumerate(cols)]
    s['seed_plain_types.parquet'] = parquet_file(schema, [(n, chunks)])

    # 2. optional columns, nulls, deprecated BIT_PACKED (MSB-first) definition levels
    defs = [0 if i % 5 == 0 else 1 for i in range(n)]
    present = [v for v, d in zip(ints, defs) if d]
    schema = [root(2), schema_el('a', typ=INT32, rep=OPT), schema_el('b', typ=BYTE_ARRAY, rep=OPT, conv=0)]
    chunks = [Chunk(INT32, [page_v1(plain(INT32, present), n, def_bytes=bitpack_msb(defs, 1), def_enc=BIT_PACKED)], n,
                    encodings=(PLAIN, BIT_PACKED)),
              Chunk(BYTE_ARRAY, [page_v1(plain(BYTE_ARRAY, [b'x' * (v % 3) for v in present]), n,
                                         def_bytes=struct.pack('<I', len(rle_hybrid(defs, 1))) + rle_hybrid(defs, 1))], n)]
    s['seed_bitpacked_levels.parquet'] = parquet_file(schema, [(n, chunks)])

    # 3. RLE-encoded booleans (V1 and V2), several pages
    bools = [1 if (i // 3) % 2 else 0 for i in range(40)]
    rle_b = rle_hybrid(bools, 1)
    schema = [root(1), schema_el('flag', typ=BOOLEAN, rep=REQ)]
    chunks = [Chunk(BOOLEAN, [page_v1(struct.pack('<I', len(rle_b)) + rle_b, 40, enc=RLE),
                              page_v2(struct.pack('<I', len(rle_b)) + rle_b, 40, 0, 40, enc=RLE)], 80,
                    encodings=(RLE,))]
    s['seed_rle_bool.parquet'] = parquet_file(schema, [(80, chunks)])

    # 4. dictionaries: bit width 0 indices, PLAIN_DICTIONARY + RLE_DICTIONARY,
    #    an INDEX_PAGE and an unknown page type between data pages, SNAPPY
    dict_vals = [b'alpha', b'beta', b'', b'gamma' * 10]
    idx = [(i * 5) % 4 for i in range(30)]
    schema = [root(3), schema_el('s', typ=BYTE_ARRAY, rep=OPT, conv=0), schema_el('one', typ=INT64, rep=REQ),
              schema_el('fx', typ=FLBA, rep=REQ, tlen=3)]
    defs = [0 if i % 7 == 3 else 1 for i in range(30)]
    pidx = [v for v, d in zip(idx, defs) if d]
    dl = rle_hybrid(defs, 1)
    chunks = [
        Chunk(BYTE_ARRAY, [page_dict(plain(BYTE_ARRAY, dict_vals), 4, codec=SNAPPY),
                           page_v1(bytes([2]) + rle_hybrid(pidx[:10], 2), 12, enc=PLAIN_DICT,
                                   def_bytes=struct.pack('<I', len(rle_hybrid(defs[:12], 1))) + rle_hybrid(defs[:12], 1), codec=SNAPPY),
                           page_other(INDEX_PAGE), page_other(7),
                           page_v1(bytes([2]) + rle_hybrid(pidx[10:], 2, 'packed'), 18, enc=RLE_DICT,
                                   def_bytes=struct.pack('<I', len(rle_hybrid(defs[12:], 1))) + rle_hybrid(defs[12:], 1), codec=SNAPPY)],
              30, codec=SNAPPY, encodings=(PLAIN_DICT, RLE_DICT, RLE), has_dict=True),
        Chunk(INT64, [page_dict(plain(INT64, [42]), 1), page_v1(bytes([0]) + uvar(30 << 1), 30, enc=RLE_DICT)], 30,
              encodings=(PLAIN, RLE_DICT), has_dict=True),
        Chunk(FLBA, [page_dict(plain(FLBA, [b'abc', b'xyz'], 3), 2), page_v1(bytes([1]) + rle_hybrid([i & 1 for i in range(30)], 1), 30, enc=RLE_DICT)], 30,
              encodings=(PLAIN, RLE_DICT), has_dict=True)]
    s['seed_dict_snappy.parquet'] = parquet_file(schema, [(30, chunks)])

    # 5. V2 pages: SNAPPY codec with is_compressed true and false, nulls,
    #    page CRCs on V1 pages; two row groups, the second empty
    vals = [float(i) * 1.5 for i in range(24)]
    defs = [0 if i % 4 == 1 else 1 for i in range(24)]
    pv = [v for v, d in zip(vals, defs) if d]
    schema = [root(2), schema_el('d', typ=DOUBLE, rep=OPT), schema_el('i', typ=INT32, rep=REQ, conv=16)]
    d1 = rle_hybrid(defs[:12], 1)
    d2 = rle_hybrid(defs[12:], 1)
    n1 = sum(defs[:12])
    chunks = [Chunk(DOUBLE, [page_v2(plain(DOUBLE, pv[:n1]), 12, 12 - n1, 12, def_bytes=d1, codec=SNAPPY, is_compressed=True),
                             page_v2(plain(DOUBLE, pv[n1:]), 12, 12 - sum(defs[12:]), 12, def_bytes=d2, codec=SNAPPY, is_compressed=False)],
                    24, codec=SNAPPY),
              Chunk(INT32, [page_v1(plain(INT32, list(range(12))), 12, crc=True, codec=SNAPPY),
                            page_v1(plain(INT32, list(range(12, 24))), 12, crc=True, codec=SNAPPY)], 24, codec=SNAPPY)]
    empty = [Chunk(DOUBLE, [], 0, codec=SNAPPY), Chunk(INT32, [], 0, codec=SNAPPY)]
    s['seed_v2_crc_rowgroups.parquet'] = parquet_file(schema, [(24, chunks), (0, empty)],
                                                      kv=[('k', 'v'), ('novalue', None)])

    # 6. metadata: every logical annotation and converted type, statistics,
    #    field ids, a nested optional struct (max_def 2), a repeated column
    def lt(fid, inner=None):
        return S(st(fid, inner or S()))

    unit = lambda u: S(st(u, S()))  # noqa: E731
    leaves = [
        ('str', BYTE_ARRAY, lt(1), None, None), ('enum', BYTE_ARRAY, lt(4), None, None),
        ('dec', INT32, lt(5, S(i32(1, 2), i32(2, 9))), None, None), ('date', INT32, lt(6), None, None),
        ('tms', INT32, lt(7, S((1, 'bool', True), st(2, unit(1)))), None, None),
        ('tns', INT64, lt(7, S((1, 'bool', False), st(2, unit(3)))), None, None),
        ('ts', INT64, lt(8, S((1, 'bool', True), st(2, unit(2)))), None, None),
        ('u8', INT32, lt(10, S((1, 'i8', 8), (2, 'bool', False))), None, None),
        ('i64', INT64, lt(10, S((1, 'i8', 64), (2, 'bool', True))), None, None),
        ('json', BYTE_ARRAY, lt(12), None, None), ('bson', BYTE_ARRAY, lt(13), None, None),
        ('uuid', FLBA, lt(14), 16, None), ('f16', FLBA, lt(15), 2, None), ('unk', INT32, lt(30), None, None),
        ('legacy_dec', FLBA, None, 5, 5), ('legacy_ts', INT64, None, None, 10), ('legacy_u16', INT32, None, None, 12),
        ('legacy_interval', FLBA, None, 12, 21),
    ]
    nodes = []
    chunks = []
    for name, typ, logical, tlen, conv in leaves:
        nodes.append(schema_el(name, typ=typ, rep=OPT, tlen=tlen, conv=conv, scale=2 if conv == 5 else None,
                               prec=9 if conv == 5 else None, fid=len(nodes) + 1, logical=logical))
        w = tlen or {INT32: 4, INT64: 8, BYTE_ARRAY: 3}[typ]
        one = plain(typ, [b'\x01' * w] if typ == FLBA else [b'abc'] if typ == BYTE_ARRAY else [7], tlen)
        stats = S(bn(1, one), bn(2, one), i64(3, 1), i64(4, 1), bn(5, one), bn(6, one), (7, 'bool', True), (8, 'bool', False))
        dl = rle_hybrid([1, 0], 1)
        chunks.append(Chunk(typ, [page_v1(one, 2, def_bytes=struct.pack('<I', len(dl)) + dl)], 2, stats=stats, path=(name,)))
    # nested: optional group g { optional int32 x; } and repeated int32 r (UNSUPPORTED for reading)
    nodes.append(schema_el('g', rep=OPT, children=1, conv=None))
    nodes.append(schema_el('x', typ=INT32, rep=OPT))
    dl = rle_hybrid([2, 1], 2)
    chunks.append(Chunk(INT32, [page_v1(plain(INT32, [5]), 2, def_bytes=struct.pack('<I', len(dl)) + dl)], 2, path=('g', 'x')))
    nodes.append(schema_el('r', typ=INT32, rep=REP))
    rl = rle_hybrid([0, 0], 1)
    dl = rle_hybrid([1, 1], 1)
    body = struct.pack('<I', len(rl)) + rl + struct.pack('<I', len(dl)) + dl + plain(INT32, [3, 4])
    chunks.append(Chunk(INT32, [S(i32(1, DATA_PAGE), i32(2, len(body)), i32(3, len(body)),
                                  st(5, S(i32(1, 2), i32(2, PLAIN), i32(3, RLE), i32(4, RLE)))).enc() + body],
                        2, path=('r',)))
    s['seed_logical_nested.parquet'] = parquet_file([root(len(leaves) + 2)] + nodes, [(2, chunks)],
                                                    kv=[('writer.note', 'x' * 20)])

    # 7. SNAPPY stress: long repetitive strings (copies of every kind)
    strs = [(b'the quick brown fox %d ' % (i % 5)) * (1 + i % 9) for i in range(40)] + [bytes(range(256)) * 20]
    schema = [root(1), schema_el('t', typ=BYTE_ARRAY, rep=REQ)]
    chunks = [Chunk(BYTE_ARRAY, [page_v1(plain(BYTE_ARRAY, strs), len(strs), codec=SNAPPY)], len(strs), codec=SNAPPY)]
    s['seed_snappy_copies.parquet'] = parquet_file(schema, [(len(strs), chunks)])

    # 8. ColumnChunks without meta_data (legal at open, an error when read),
    #    many row groups
    k = 12
    schema = [root(k)] + [schema_el('e%d' % i, typ=INT32, rep=OPT) for i in range(k)]
    empty_rg = S((1, 'list', (T_STRUCT, [S() for _ in range(k)])), i64(3, 0))
    foot = S(i32(1, 1), (2, 'list', (T_STRUCT, schema)), i64(3, 0), (4, 'list', (T_STRUCT, [empty_rg] * 20))).enc()
    s['seed_empty_chunks.parquet'] = b'PAR1' + foot + struct.pack('<I', len(foot)) + b'PAR1'

    # 9. allocation ratio: files whose metadata or dictionary take far more
    #    memory than 64x their size (fine under the default limit of
    #    tests/fuzz_file.c, caught with -DGF_FUZZ_MEM_BASE='((uint64_t)4<<20)')
    #  a. 400 leaf columns x 100 row groups of empty ColumnChunk structs
    #     (1 byte each in the file, sizeof(gpufeed_chunk_info) in memory)
    k, r = 400, 100
    schema = [root(k)] + [schema_el('c%d' % i, typ=INT32, rep=REQ) for i in range(k)]
    rg = S((1, 'list', (T_STRUCT, [S() for _ in range(k)])), i64(3, 0))
    foot = S((2, 'list', (T_STRUCT, schema)), i64(3, 0), (4, 'list', (T_STRUCT, [rg] * r))).enc()
    s['ratio_empty_chunks.parquet'] = b'PAR1' + foot + struct.pack('<I', len(foot)) + b'PAR1'
    #  b. a SNAPPY dictionary page of 1M one-byte FIXED_LEN_BYTE_ARRAY entries
    n = 1 << 20
    chunks = [Chunk(FLBA, [page_dict(b'\x00' * n, n, codec=SNAPPY),
                           page_v1(bytes([0]) + uvar(1 << 1), 1, enc=RLE_DICT, codec=SNAPPY)],
                    1, codec=SNAPPY, encodings=(PLAIN, RLE_DICT), has_dict=True)]
    s['ratio_flba1_dict.parquet'] = parquet_file([root(1), schema_el('b', typ=FLBA, rep=REQ, tlen=1)], [(1, chunks)])

    # 10. small invalid files
    ok = s['seed_plain_types.parquet']
    s['seed_encrypted_footer.parquet'] = b'PAR1' + b'\x00' * 16 + struct.pack('<I', 16) + b'PARE'
    foot = S((2, 'list', (T_STRUCT, [root(0)])), i64(3, 0), (4, 'list', (T_STRUCT, []))).enc()
    s['seed_min.parquet'] = b'PAR1' + foot + struct.pack('<I', len(foot)) + b'PAR1'
    s['seed_truncated_page.parquet'] = ok[:60] + ok[-(struct.unpack('<I', ok[-8:-4])[0] + 8):]
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, data in sorted(seeds().items()):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
        print('%-40s %6d bytes' % (name, len(data)))


if __name__ == '__main__':
    main()
