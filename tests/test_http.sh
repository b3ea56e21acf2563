#!/usr/bin/env bash
# Remote sources: examples/http_source.c (libcurl range requests through the
# read-at callback, the will_read hint and the tensor cache) against the
# fixture corpus served by a local nginx on a loopback port (started here,
# stopped at the end), and through tests/http_proxy.py, which cuts
# connections mid-body. Checks: the same batches as the local files; unit
# ranges coalesced into few requests; once the cache is built, epochs make
# zero HTTP requests (client counters and nginx's access log agree); a
# dropped connection is retried with the same batches; a persistent failure
# is a clear error, no hang, no partial batch; a missing URL is a clear
# error. Installs nginx and libcurl4-openssl-dev with apt-get if missing.
set -uo pipefail
cd "$(dirname "$0")/.."
PASS=0; FAIL=0
ok() { PASS=$((PASS + 1)); echo "PASS $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
T=$(mktemp -d)
NGINX_PID=""; PROXY_PIDS=()
cleanup() {
  [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null
  for p in "${PROXY_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ] || { [ ! -f /usr/include/curl/curl.h ] && [ ! -f /usr/include/x86_64-linux-gnu/curl/curl.h ] && [ ! -f /usr/include/aarch64-linux-gnu/curl/curl.h ]; }; then
  echo "installing nginx-light libcurl4-openssl-dev"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx-light libcurl4-openssl-dev; } > "$T/apt.log" 2>&1 ||
    { bad "install nginx/libcurl: $(tail -3 "$T/apt.log")"; echo "$PASS passed, $FAIL failed"; exit 1; }
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
fi
if cc -O2 -std=c99 -Wall -Wextra -Werror -pedantic -I. examples/http_source.c -o "$T/http_source" -lcurl -lpthread -lm 2> "$T/build.err"; then
  ok "examples/http_source.c builds in one command"
else bad "build http_source: $(head -5 "$T/build.err")"; echo "$PASS passed, $FAIL failed"; exit 1; fi
HS="$T/http_source"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
PORT=$(free_port)
mkdir -p "$T/www" "$T/ngx"
cp tests/data/*.parquet examples/data/flights.parquet "$T/www/"
chmod -R a+rX "$T"
cat > "$T/ngx/nginx.conf" << CONF
daemon off;
worker_processes 1;
pid $T/ngx/nginx.pid;
error_log $T/ngx/error.log;
events { worker_connections 256; }
http {
  access_log $T/ngx/access.log;
  client_body_temp_path $T/ngx/body; proxy_temp_path $T/ngx/proxy; fastcgi_temp_path $T/ngx/fcgi;
  uwsgi_temp_path $T/ngx/uwsgi; scgi_temp_path $T/ngx/scgi;
  server { listen 127.0.0.1:$PORT; root $T/www; location / { } }
}
CONF
"$NGINX" -c "$T/ngx/nginx.conf" -p "$T/ngx" > "$T/ngx/stdout" 2>&1 &
NGINX_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/ids.parquet" 2>/dev/null && break; sleep 0.1; done
if curl -s -f -o /dev/null "http://127.0.0.1:$PORT/ids.parquet"; then ok "nginx serves the corpus on 127.0.0.1:$PORT"
else bad "nginx did not start: $(cat "$T/ngx/stdout" "$T/ngx/error.log" 2>/dev/null | tail -3)"; echo "$PASS passed, $FAIL failed"; exit 1; fi
URL="http://127.0.0.1:$PORT"
logn() { wc -l < "$T/ngx/access.log"; }

# 1. the same batches as local files (two datasets, several epochs, 2 workers)
for f in ids.parquet flights.parquet; do
  args=(--epochs 2 --batch 1000 --workers 2 --seed 3 --unit-rows 30000 --print-batches)
  "$HS" "${args[@]}" --local "$T/www/$f" > "$T/local_$f.out" 2> "$T/local_$f.err"
  if timeout 120 "$HS" "${args[@]}" "$URL/$f" > "$T/http_$f.out" 2> "$T/http_$f.err"; then
    check "$f over HTTP: same batches as the local file ($(grep -c '^epoch .* batch' "$T/http_$f.out") batches)" \
      cmp -s <(grep '^epoch .* batch' "$T/local_$f.out") <(grep '^epoch .* batch' "$T/http_$f.out")
  else bad "$f over HTTP: $(tail -3 "$T/http_$f.err")"; fi
done
# 2. coalescing: a unit that is a whole row group (ids.parquet: 4 row groups
# of 5,000 rows, 4 columns) is one request; a slice of a row group (flights:
# one row group, 19 columns, units of 30,000 rows) at most one per column
"$HS" --epochs 2 --batch 1000 --workers 2 --seed 3 --unit-rows 5000 "$URL/ids.parquet" > "$T/rg.out" 2> "$T/rg.err"
reqs=$(grep '^http:' "$T/rg.out" | sed -E 's/.* ([0-9]+) while delivering.*/\1/')
check "ids: $reqs requests for 8 unit decodes of 4 columns (one per unit)" test "$reqs" -le 8
line=$(grep '^http:' "$T/http_flights.parquet.out")
reqs=$(echo "$line" | sed -E 's/.* ([0-9]+) while delivering.*/\1/')
units=$(( (336776 + 29999) / 30000 * 2 ))
check "flights: $reqs requests for $units unit decodes of 19 columns (at most one per column and unit)" test "$reqs" -le $((units * 19))
prefetched=$(echo "$line" | sed -E 's/.* ([0-9]+) reads served from prefetched.*/\1/')
check "flights: $prefetched page reads served from prefetched ranges" test "$prefetched" -gt 0

# 3. the cache: built in a first run, then epochs make no HTTP request at all
"$HS" --epochs 1 --batch 1000 --seed 3 --unit-rows 30000 --cache "$T/cache" "$URL/flights.parquet" > "$T/c1.out" 2> "$T/c1.err"
check "first run builds the cache ($(grep -o 'cache [a-z]*' "$T/c1.out"))" grep -q 'cache ready' "$T/c1.out"
before=$(logn)
"$HS" --epochs 3 --batch 1000 --seed 3 --unit-rows 30000 --cache "$T/cache" --print-batches "$URL/flights.parquet" > "$T/c2.out" 2> "$T/c2.err"
after=$(logn)
open_reqs=$(grep '^http:' "$T/c2.out" | sed -E 's/^http: ([0-9]+) requests while opening.*/\1/')
epoch_reqs=$(grep '^http:' "$T/c2.out" | sed -E 's/.* ([0-9]+) while delivering.*/\1/')
check "cached run: 0 HTTP requests while delivering 3 epochs (client count)" test "$epoch_reqs" = 0
check "cached run: nginx saw only the $open_reqs opening requests (access log: $((after - before)))" test $((after - before)) -eq "$open_reqs"
check "cached run: every epoch read 0 source bytes" bash -c "! grep -E '^epoch [0-9]+: source bytes read [1-9]' '$T/c2.out'"
"$HS" --epochs 3 --batch 1000 --seed 3 --unit-rows 30000 --print-batches --local "$T/www/flights.parquet" > "$T/c3.out" 2>&1
check "cached run: same batches as the local file without a cache" cmp -s <(grep '^epoch .* batch' "$T/c2.out") <(grep '^epoch .* batch' "$T/c3.out")

# 4. dropped connections mid-body are retried: same batches
PP=$(free_port)
python3 tests/http_proxy.py "$PP" "$PORT" --drop-every 3 2> "$T/proxy1.log" & PROXY_PIDS+=($!)
for _ in $(seq 50); do curl -s -o /dev/null -I "http://127.0.0.1:$PP/ids.parquet" 2>/dev/null && break; sleep 0.1; done
if timeout 120 "$HS" --epochs 2 --batch 1000 --workers 2 --seed 3 --unit-rows 30000 --print-batches "http://127.0.0.1:$PP/flights.parquet" > "$T/drop.out" 2> "$T/drop.err"; then
  retries=$(grep '^http:' "$T/drop.out" | sed -E 's/.*; ([0-9]+) retries.*/\1/')
  check "dropped connections: $(grep -c 'cut after' "$T/proxy1.log") cut mid-body, $retries retried, same batches" \
    bash -c "[ '$retries' -gt 0 ] && cmp -s <(grep '^epoch .* batch' '$T/drop.out') <(grep '^epoch .* batch' '$T/http_flights.parquet.out')"
else bad "dropped connections: run failed: $(tail -3 "$T/drop.err")"; fi

# 5. a persistent failure: a clear error, no hang, no partial batch.
# ids.parquet, a unit per row group: the opening GETs and the first two
# units' fetches pass, then every GET is cut; one worker, so that the
# failing unit is always the same
"$HS" --epochs 1 --batch 1000 --workers 1 --seed 3 --unit-rows 5000 --print-batches "$URL/ids.parquet" > "$T/ids_good.out" 2> "$T/ids_good.err"
open_gets=$(( $(grep '^http:' "$T/ids_good.out" | sed -E 's/^http: ([0-9]+) requests while opening.*/\1/') - 1 ))
PF=$(free_port)
python3 tests/http_proxy.py "$PF" "$PORT" --fail-after $((open_gets + 2)) 2> "$T/proxy2.log" & PROXY_PIDS+=($!)
for _ in $(seq 50); do curl -s -o /dev/null -I "http://127.0.0.1:$PF/ids.parquet" 2>/dev/null && break; sleep 0.1; done
start=$SECONDS
timeout 120 "$HS" --epochs 1 --batch 1000 --workers 1 --seed 3 --unit-rows 5000 --retries 3 --print-batches "http://127.0.0.1:$PF/ids.parquet" > "$T/fail.out" 2> "$T/fail.err"
rc=$?
check "persistent failure: exit 1, no hang (rc $rc after $((SECONDS - start)) s)" test "$rc" -eq 1
check "persistent failure: each failed request is named ($(grep -m1 -oE 'ids.parquet, bytes.*' "$T/fail.err" | head -c 120))" \
  grep -qE "giving up after 3 attempt\(s\): .*ids.parquet, bytes [0-9]+-[0-9]+" "$T/fail.err"
cp "$T/fail.err" build/logs/http_fail.err 2>/dev/null
check "persistent failure: the loader's error names file, row group, column and offset ($(grep -v 'giving up' "$T/fail.err" | head -1 | head -c 200))" \
  bash -c "grep -v 'giving up' '$T/fail.err' | grep -qE 'ids.parquet.*row group [0-9]+.*column.*(offset|byte)'"
nb=$(grep -c '^epoch .* batch' "$T/fail.out")
total=$(grep -c '^epoch .* batch' "$T/ids_good.out")
check "persistent failure: $nb of $total batches delivered before the error" test "$nb" -gt 0 -a "$nb" -lt "$total"
check "persistent failure: those $nb batches are the good run's first $nb (no partial batch)" \
  cmp -s <(grep '^epoch .* batch' "$T/fail.out") <(grep '^epoch .* batch' "$T/ids_good.out" | head -n "$nb")

# 6. a missing object
timeout 60 "$HS" --epochs 1 "$URL/no_such_file.parquet" > "$T/404.out" 2> "$T/404.err"
rc=$?
check "missing URL: exit 1 with a message naming the URL and HTTP 404" bash -c "[ $rc -eq 1 ] && grep -q 'no_such_file.parquet.*404' '$T/404.err'"

echo "$PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
