#!/usr/bin/env python3
"""Writes the seed inputs of tests/fuzz_gzip.c: each is the page's
uncompressed size (4 bytes, little-endian) and then a GZIP page body.
Standard library only; deterministic.

    python3 tests/fuzz/gzip/make_seeds.py tests/fuzz/gzip
"""
import os
import random
import struct
import sys
import zlib


def deflate(data, level=6, wbits=31, strategy=zlib.Z_DEFAULT_STRATEGY):
    c = zlib.compressobj(level, zlib.DEFLATED, wbits, 8, strategy)
    return c.compress(data) + c.flush()


def member_with_fields(data):
    """a gzip member with FEXTRA, FNAME, FCOMMENT and FHCRC"""
    h = bytearray(b"\x1f\x8b\x08\x1e\x00\x00\x00\x00\x00\x03")
    h += struct.pack("<H", 4) + b"ab\x00c"
    h += b"page.bin\x00" + b"comment\x00"
    h += struct.pack("<H", zlib.crc32(bytes(h)) & 0xFFFF)
    return bytes(h) + deflate(data, 6, -15) + struct.pack("<II", zlib.crc32(data), len(data))


def main(out):
    rnd = random.Random(20240607)
    words = [b"the", b"of", b"parquet", b"column", b"page", b"gzip", b"1998-03-14", b"NULL", b"0.125"]
    text = b" ".join(rnd.choice(words) for _ in range(700))
    skewed = bytes(min(255, int(rnd.expovariate(0.05))) for _ in range(20000))  # long codes
    runs = b"".join(bytes([rnd.randrange(4)]) * rnd.randrange(1, 300) for _ in range(60))
    ints = b"".join(struct.pack("<q", 1000000 + 3 * i + rnd.randrange(3)) for i in range(800))
    seeds = {
        "dynamic.gz": (text, deflate(text)),
        "stored.gz": (text[:500], deflate(text[:500], 0)),
        "fixed.gz": (text[:800], deflate(text[:800], 6, 31, zlib.Z_FIXED)),
        "huffman_only.gz": (skewed, deflate(skewed, 6, 31, zlib.Z_HUFFMAN_ONLY)),
        "rle.gz": (runs, deflate(runs, 6, 31, zlib.Z_RLE)),
        "ints.gz": (ints, deflate(ints, 9)),
        "zlib.z": (text, deflate(text, 6, 15)),
        "members_padding.gz": (text + runs, deflate(text, 1) + deflate(b"") + deflate(runs, 9) + b"\x00" * 7),
        "header_fields.gz": (text[:300], member_with_fields(text[:300])),
        "empty.gz": (b"", deflate(b"")),
    }
    os.makedirs(out, exist_ok=True)
    for name, (raw, body) in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack("<I", len(raw)) + body)
        assert zlib.decompress(body.rstrip(b"\x00") if name.startswith("members") else body, 47) is not None


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
