#!/usr/bin/env bash
# Ranks under a real launcher: examples/mpi_ranks.c built with mpicc (one
# command) and launched by OpenMPI's mpirun with 1, 2 and 4 ranks. Checks,
# per epoch: each rank's ids are disjoint from every other rank's, together
# they cover every row exactly (tests/data/ids.parquet: ids 0..19999), all
# ranks have the same number of batches, padding repeats only the rank's own
# rows; and a second run with the same seed reproduces every rank's stream
# byte for byte (a different seed does not). Installs openmpi-bin and
# libopenmpi-dev with apt-get when mpicc/mpirun are missing.
set -uo pipefail
cd "$(dirname "$0")/.."
PASS=0; FAIL=0
ok() { PASS=$((PASS + 1)); echo "PASS $1"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
  echo "installing openmpi-bin libopenmpi-dev"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openmpi-bin libopenmpi-dev; } > "$T/apt.log" 2>&1 ||
    { bad "install OpenMPI: $(tail -3 "$T/apt.log")"; echo "$PASS passed, $FAIL failed"; exit 1; }
fi
if mpicc -O2 -std=c99 -Wall -Wextra -Werror -pedantic -I. examples/mpi_ranks.c -o "$T/mpi_ranks" -lpthread -lm 2> "$T/build.err"; then
  ok "mpicc builds examples/mpi_ranks.c in one command"
else
  bad "mpicc build: $(head -5 "$T/build.err")"; echo "$PASS passed, $FAIL failed"; exit 1
fi
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" -eq 0 ] && MPIRUN+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

for np in 1 2 4; do
  for run in a b; do
    if timeout 120 "${MPIRUN[@]}" -np $np "$T/mpi_ranks" tests/data/ids.parquet 2 7 "$T/np$np.$run" > "$T/np$np.$run.log" 2>&1; then :
    else bad "mpirun -np $np (run $run): $(tail -5 "$T/np$np.$run.log")"; continue 2; fi
  done
  timeout 120 "${MPIRUN[@]}" -np $np "$T/mpi_ranks" tests/data/ids.parquet 2 8 "$T/np$np.c" > "$T/np$np.c.log" 2>&1 || bad "mpirun -np $np (seed 8)"
  grep -q "batch counts equal on every rank" "$T/np$np.a.log" && ok "np=$np: rank 0 gathered equal batch counts" || bad "np=$np: $(cat "$T/np$np.a.log")"
  if python3 - "$T" $np << 'PY'
import sys, collections
T, world = sys.argv[1], int(sys.argv[2])
N = 20000
fails = []
per_rank = {}
for r in range(world):
    rows = collections.defaultdict(list); batches = collections.Counter()
    for line in open("%s/np%d.a.%d" % (T, world, r)):
        f = line.split()
        e = int(f[0]); batches[e] += 1
        rows[e].extend(int(x) for x in f[4:])
    per_rank[r] = (rows, batches)
for e in (0, 1):
    counts = {per_rank[r][1][e] for r in range(world)}
    if len(counts) != 1: fails.append("epoch %d: batch counts %s" % (e, counts))
    seen = {}
    for r in range(world):
        ids = per_rank[r][0][e]
        distinct = set(ids)
        for i in distinct:
            if i in seen: fails.append("epoch %d: id %d on ranks %d and %d" % (e, i, seen[i], r)); break
            seen[i] = r
        if len(ids) - len(distinct) > 256 * 2:
            fails.append("epoch %d rank %d: %d repeated rows (padding is at most a batch)" % (e, r, len(ids) - len(distinct)))
    if sorted(seen) != list(range(N)):
        fails.append("epoch %d: ranks cover %d of %d ids" % (e, len(seen), N))
if fails:
    print("\n".join(fails[:10])); sys.exit(1)
PY
  then ok "np=$np: shards disjoint, complete, equal batch counts, in both epochs"; else bad "np=$np: shard check"; fi
  same=1; differ=0
  for ((r = 0; r < np; r++)); do
    cmp -s "$T/np$np.a.$r" "$T/np$np.b.$r" || same=0
    cmp -s "$T/np$np.a.$r" "$T/np$np.c.$r" || differ=1
  done
  [ $same -eq 1 ] && ok "np=$np: same seed reproduces every rank's stream (ids and batch hashes)" || bad "np=$np: a rerun with the same seed differs"
  [ $differ -eq 1 ] && ok "np=$np: another seed gives another order" || bad "np=$np: seed 8 gave the same stream as seed 7"
done
# Elastic mode (issue 18): the global batch is the same rows in the same order
# for any world dividing it; a checkpoint at one world resumes at another;
# with partitions a rank decodes about 1/world of the data; a tensor cache
# built ahead of time serves every world.
if mpicc -O2 -std=c99 -Wall -Wextra -Werror -pedantic -I. tests/elastic_mpi.c -o "$T/elastic_mpi" -lpthread -lm 2> "$T/ebuild.err"; then
  ok "mpicc builds tests/elastic_mpi.c"
  EF=tests/data/ids.parquet G=1024 UR=1000
  CT=$T/ecache; mkdir -p "$CT"
  [ -x build/gpufeed-cache ] || make -s build/gpufeed-cache > /dev/null 2>&1
  if build/gpufeed-cache build --cache "$CT" --unit-rows $UR "$EF" > "$T/ecache.log" 2>&1; then ok "the cache built ahead of time (gpufeed-cache build)"; else bad "gpufeed-cache build: $(tail -3 "$T/ecache.log")"; fi
  run_el() { # NP P CACHE START_EPOCH START_BATCH EPOCHS TAG
    timeout 120 "${MPIRUN[@]}" -np "$1" "$T/elastic_mpi" "$EF" $G "$2" "$6" 5 3 $UR "$3" "$4" "$5" "$T/el.$7" > "$T/el.$7.log" 2>&1 &&
      cat "$T"/el."$7".[0-9]* | sort -n -k1,1 -k2,2 -k3,3 > "$T/el.$7.rows"
  }
  for P in 0 4; do
    for c in none cache; do
      cache=-; [ $c = cache ] && cache=$CT
      for np in 1 2 4; do
        run_el $np $P "$cache" 0 0 2 "p$P.$c.$np" || bad "elastic P=$P $c np=$np: $(tail -3 "$T/el.p$P.$c.$np.log")"
      done
      n1=$(wc -l < "$T/el.p$P.$c.1.rows" 2>/dev/null || echo 0)
      if [ "$n1" -gt 20000 ] && cmp -s "$T/el.p$P.$c.1.rows" "$T/el.p$P.$c.2.rows" && cmp -s "$T/el.p$P.$c.1.rows" "$T/el.p$P.$c.4.rows"; then
        ok "elastic partitions=$P, $c: worlds 1, 2 and 4 deliver the same global batches, byte for byte ($n1 rows over 2 epochs, shuffle window 3)"
      else bad "elastic partitions=$P, $c: the global streams of worlds 1, 2, 4 differ ($n1 rows at world 1)"; fi
    done
    cmp -s "$T/el.p$P.none.4.rows" "$T/el.p$P.cache.4.rows" && ok "elastic partitions=$P: the cache and the source give the same rows" ||
      bad "elastic partitions=$P: cache vs source differ"
    grep -q "source bytes read [1-9]" "$T/el.p$P.cache.4.log" && bad "elastic partitions=$P: a rank read the source although the cache was built" ||
      ok "elastic partitions=$P: with the cache no rank reads the source"
    # a checkpoint at world 4 (epoch 1, global batch 3) resumed at world 2
    run_el 2 $P - 1 3 1 "p$P.resume" || bad "elastic partitions=$P resume: $(tail -3 "$T/el.p$P.resume.log")"
    awk '$1 == 1 && $2 >= 3' "$T/el.p$P.none.4.rows" > "$T/el.p$P.tail"
    if [ -s "$T/el.p$P.tail" ] && cmp -s "$T/el.p$P.tail" "$T/el.p$P.resume.rows"; then
      ok "elastic partitions=$P: a checkpoint taken at world 4 resumes at world 2 with the same remaining global batches"
    else bad "elastic partitions=$P: resumed at world 2, $(wc -l < "$T/el.p$P.resume.rows" 2>/dev/null) rows vs $(wc -l < "$T/el.p$P.tail") expected"; fi
  done
  # bytes read per rank: with partitions about 1/world of one rank's reading
  b1=$(sed -n 's/^rank 0: .* source bytes read //p' "$T/el.p4.none.1.log")
  b4=$(sed -n 's/^rank [0-9]*: .* source bytes read //p' "$T/el.p4.none.4.log" | sort -n | tail -1)
  echo "bytes read: world 1: $b1; the largest rank of world 4 (partitions 4): $b4; without partitions: $(sed -n 's/^rank [0-9]*: .* source bytes read //p' "$T/el.p0.none.4.log" | tr '\n' ' ')"
  if [ -n "$b1" ] && [ -n "$b4" ] && [ "$b4" -gt 0 ] && [ $((b4 * 2)) -lt "$b1" ]; then ok "elastic partitions=4: each of 4 ranks reads less than half the bytes one rank reads"
  else bad "elastic partitions=4: a rank of 4 read $b4 bytes, one rank $b1"; fi
else
  bad "mpicc build of tests/elastic_mpi.c: $(head -5 "$T/ebuild.err")"
fi
echo "$PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
