#!/usr/bin/env python3
"""The Python binding's Loader semantics, with the standard library only.

    python3 tests/test_python_core.py [--gpufeed-bench build/gpufeed-bench]

No numpy, no torch, no network: it runs in `make check` with the system's
python3 (and in `make test`). Batches are compared by their hashes
(Batch.hash(), the C loader's gpufeed_batch_hash) and read through ctypes.

  epochs      iter() runs the next epoch: 3 x `for b in loader` is 3 full
              epochs whose batches are gpufeed-bench's 3-epoch stream;
              len(); epochs=N refuses an (N+1)th iter(); an epoch left
              early is skipped (counted) by the next iter(), one not begun
              is not; next(loader); a replaced iterator is an error
  lifetime    a batch stays valid until the next-but-one next(), then it
              is an error in Python's words
  state       state_dict() resumes exactly at random points (hash of every
              batch against the uninterrupted run), O(1) size, versioned;
              resuming epochs=3 after one epoch runs the other two; a state
              of another version/dataset/seed/features/world is refused
  stats       counters, rows dropped and repeated by the rank split
  ranks       RANK/WORLD_SIZE, OMPI_*, SLURM_* read when not given; shards
              disjoint and complete; a split that drops more than a batch
              of rows per rank is refused naming the loss
  close race  close() from another thread at random times while one
              iterates: an error or the end there, never a crash (40 runs
              in a child process)
  fork        a forked child gets an error naming the fix; the parent's
              epoch stays whole; pickling is refused
  mixtures    a dict or (path, weight) pairs are mixtures (3:1 in every
              batch of packed rows; until=longest), never paths; bad weights named
  library     one library per header and options: two processes starting
              together, one from the checkout and one from a copy beside
              the same header, build it once; the key follows the header's
              bytes and the compiler, not its place
Prints "N passed, N failed" last.
"""
import argparse
import ctypes
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import gpufeed  # noqa: E402

IDS = os.path.join(ROOT, "tests", "data", "ids.parquet")          # 20,000 rows, 4 row groups; id = 0 .. 19999
FLIGHTS = os.path.join(ROOT, "examples", "data", "flights.parquet")  # row groups of 65,536 (5) and 9,096 rows
PASS = FAIL = 0


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + ((": " + detail) if detail else ""))


def error_of(fn, kind=gpufeed.GpufeedError):
    """the message fn raises (kind), or None"""
    try:
        fn()
    except kind as e:
        return str(e)
    return None


def loader(path=IDS, **kw):
    args = dict(features=["x", "k", "y"], batch_rows=1000, workers=2, seed=3, shuffle_window=2, device=None)
    args.update(kw)
    return gpufeed.Loader(path, **args)


def ids_of(b):
    """the int64 ids of a batch of Feature('id', 'i64') (read through ctypes)"""
    raw = ctypes.string_at(b._db.host.data, b.rows * 8)
    return list(memoryview(raw).cast("q"))


def bench_hashes(bench, epochs):
    out = subprocess.run([bench, IDS, "--batch", "1000", "--workers", "2", "--seed", "3", "--epochs", str(epochs),
                          "--shuffle-window", "2", "--columns", "x,k,y", "--print-batches"], capture_output=True, text=True)
    return [(int(l.split()[0]), int(l.split()[1]), l.split()[3]) for l in out.stdout.splitlines()
            if len(l.split()) == 4 and l.split()[0].isdigit()]


def test_epochs(bench):
    want = bench_hashes(bench, 3)
    L = loader()
    got, lens = [], []
    for epoch in range(3):
        lens.append(len(L))
        got.extend((b.epoch, b.index, "%016x" % b.hash()) for b in L)
    check("for epoch in range(3): for b in loader -> 3 full epochs (%s batches), gpufeed-bench's 3-epoch stream"
          % [sum(1 for g in got if g[0] == e) for e in range(3)], len(want) == 60 and got == want,
          "got %d, want %d" % (len(got), len(want)))
    check("len(loader) is an epoch's batches on this rank (20)", lens == [20, 20, 20], str(lens))
    L.close()

    L = loader(epochs=2)
    n = [sum(1 for _ in L) for _ in range(2)]
    msg = error_of(lambda: iter(L))
    check("epochs=2: two iter() passes of 20, a third a GpufeedError naming epochs=None (%s)" % (msg or "")[:60],
          n == [20, 20] and msg is not None and "epochs=None" in msg, str(n))
    L.close()

    L = loader()
    it = iter(L)
    first = [next(it).hash() for _ in range(5)]
    iter(L)                                     # replaces it: epoch 0 left after 5 batches
    msg = error_of(lambda: next(it))
    rest = ["%016x" % b.hash() for b in L]      # a new iter(): epoch 1 (0 was left early)
    st = L.stats()
    check("an epoch left early: the next iter() runs the next epoch (epoch 1's batches), 15 batches_skipped",
          rest == [w[2] for w in want if w[0] == 1] and st["batches_skipped"] == 15 and len(first) == 5,
          "skipped %d" % st["batches_skipped"])
    check("an iterator replaced by a newer iter() is a clear error (%s)" % (msg or "")[:50], msg is not None and "newer iter()" in msg)
    it1, it2 = iter(L), iter(L)                 # epoch 2 not begun: the second iter() does not skip it
    check("iter() twice before a batch: the same epoch, nothing skipped", next(it2).epoch == 2 and L.stats()["batches_skipped"] == 15)
    L.close()

    L = loader()
    eps = [next(L).epoch for _ in range(20)]
    try:
        next(L)
        stopped = False
    except StopIteration:
        stopped = True
    check("next(loader): the batches of the epoch iter() started, StopIteration at its end, then the next epoch",
          eps == [0] * 20 and stopped and next(L).epoch == 1)
    L.close()
    msg = error_of(lambda: iter(L))
    check("iter() of a closed Loader: GpufeedError (%s)" % msg, msg is not None and "closed" in msg)


def test_lifetime():
    L = loader()
    it = iter(L)
    b0 = next(it)
    b1 = next(it)
    ok1 = error_of(b0.hash) is None
    b2 = next(it)
    msg = error_of(b0.hash)
    check("a batch is valid until the next-but-one next() (one batch fetched ahead still reads)", ok1 and error_of(b1.hash) is None)
    check("... then it is released: a GpufeedError in Python's words (%s)" % (msg or "")[:70],
          msg is not None and "next-but-one" in msg and ".clone()" in msg and "gpufeed_" not in msg, msg or "")
    b2.release()
    check("release() gives a batch back at once", error_of(b2.hash) is not None)
    L.close()
    check("a batch held when the Loader closes is released, saying so", "closed" in (error_of(b1.hash) or ""), error_of(b1.hash) or "")


def run_hashes(L, upto=None, state_at=None):
    """(epoch, index, hash) of every batch of L's remaining epochs (epochs=3); with state_at=(e, k): stop
    once batch k of epoch e is next, returning the state there"""
    out = []
    for _ in range(L.epoch, 3):
        for b in L:
            out.append((b.epoch, b.index, b.hash()))
            st = L.state_dict()
            if state_at and (st["epoch"], st["batch"]) == state_at:
                return out, st
    return out, None


def test_state():
    kw = dict(epochs=3)
    L = loader(**kw)
    ref, _ = run_hashes(L)
    L.close()
    rng = random.Random(7)
    points = [(0, 0), (1, 0), (2, 19), (0, 1)] + [(rng.randrange(3), rng.randrange(1, 20)) for _ in range(4)]
    bad = []
    for e, k in points:
        L = loader(**kw)
        head, state = run_hashes(L, state_at=(e, k)) if (e, k) != (0, 0) else ([], L.state_dict())
        L.close()
        state = json.loads(json.dumps(state))          # a checkpoint goes through JSON / torch.save
        L = loader(**kw)
        L.load_state_dict(state)
        tail, _ = run_hashes(L)
        L.close()
        if head + tail != ref:
            bad.append((e, k, len(head), len(tail)))
    check("state_dict at %d random points (%s) then a new Loader's load_state_dict: every batch's hash equals the "
          "uninterrupted 3 epochs" % (len(points), " ".join("%d:%d" % p for p in points)), not bad and len(ref) == 60, str(bad))

    L = loader(**kw)
    for b in L:
        pass
    st = L.state_dict()
    L.close()
    L = loader(**kw)
    L.load_state_dict(st)
    passes = []
    for _ in range(2):
        passes.append(sorted(set(b.epoch for b in L)))
    msg = error_of(lambda: iter(L))
    check("epochs=3 resumed after one finished epoch: iter() runs epochs 1 and 2, then the run is over",
          passes == [[1], [2]] and msg is not None, str(passes))
    L.close()

    small = loader().state_dict()
    with tempfile.TemporaryDirectory() as td:
        for i in range(40):
            shutil.copy(IDS, os.path.join(td, "part-%02d.parquet" % i))
        big = loader(path=td).state_dict()
    check("the state is O(1): the same keys and size for 1 file and for 40 (%d and %d bytes of JSON)"
          % (len(json.dumps(small)), len(json.dumps(big))), sorted(small) == sorted(big) and abs(len(json.dumps(small)) - len(json.dumps(big))) < 8
          and small["version"] == gpufeed.STATE_VERSION and len(json.dumps(big)) < 400)
    check("... and names the other dataset apart", small["dataset"] != big["dataset"])

    L = loader()
    cases = [(dict(small, version=99), "version 99"), (dict(small, format="x"), "not a gpufeed Loader state"),
             (loader(seed=4).state_dict(), "seed"), (big, "dataset"),
             (loader(features=["x", "k"]).state_dict(), "feature set"), (loader(batch_rows=500).state_dict(), "batch_rows"),
             (loader(shuffle_window=3).state_dict(), "order"), (dict(small, world=2), "world")]
    for st, needle in cases:
        msg = error_of(lambda: L.load_state_dict(st))
        check("load_state_dict of a state with another %s: a GpufeedError saying so (%s)" % (needle, (msg or "")[:70]),
              msg is not None and needle in msg, msg or "accepted")
    msg = error_of(lambda: L.load_state_dict(dict(small, epoch=0, batch=21)))
    check("a position past the epoch's batches is refused (%s)" % (msg or "")[:50], msg is not None)
    L.close()


def test_stats():
    rows = {}
    for even in ("drop", "pad"):
        for r in range(2):
            L = loader(features=[gpufeed.Feature("id", "i64")], batch_rows=3000, rank=r, world=2, even=even)
            got = [i for b in L for i in ids_of(b)]
            st = L.stats()
            rows[(even, r)] = (got, st)
            L.close()
    d0, d1 = rows[("drop", 0)][1], rows[("drop", 1)][1]
    p0 = rows[("pad", 0)][1]
    check("stats(): even='drop' at world 2, batch_rows 3000: 1000 rows dropped a rank (counted), 2000 an epoch in all",
          d0["rows_dropped"] == 1000 and d1["rows_dropped"] == 1000 and d0["epoch_rows_dropped"] == 2000
          and d0["rows_per_epoch"] == 20000 and d0["batches"] == 3 and d0["rows"] == 9000,
          "%s" % {k: d0[k] for k in ("rows_dropped", "epoch_rows_dropped", "rows_per_epoch", "batches", "rows")})
    check("stats(): even='pad': 2000 rows repeated a rank, 4000 an epoch, none dropped",
          p0["rows_repeated"] == 2000 and p0["epoch_rows_repeated"] == 4000 and p0["rows_dropped"] == 0,
          str({k: p0[k] for k in ("rows_repeated", "epoch_rows_repeated", "rows_dropped")}))
    a, b = set(rows[("pad", 0)][0]), set(rows[("pad", 1)][0])
    check("even='pad' shards: disjoint, complete (ids 0..19999)", not (a & b) and a | b == set(range(20000)))
    keys = ["epoch", "batch", "batches_per_epoch", "rank", "world", "rank_source", "unit_rows", "rows_per_epoch", "rows",
            "batches", "rows_dropped", "rows_repeated", "epoch_rows_dropped", "epoch_rows_repeated", "batches_skipped",
            "bytes_read", "units_decoded", "wall_s", "trainer_wait_s", "workers_busy", "bottleneck", "verdict", "cache_state"]
    check("stats() is a dict with %d keys, JSON-serializable" % len(d0), all(k in d0 for k in keys) and json.dumps(d0),
          str([k for k in keys if k not in d0]))


RANKS_CHILD = r"""
import json, sys
sys.path.insert(0, %(tools)r)
import gpufeed, ctypes
out = []
try:
    L = gpufeed.Loader(%(ids)r, features=[gpufeed.Feature("id", "i64")], batch_rows=1000, device=None, **%(kw)s)
    ids = [i for b in L for i in memoryview(ctypes.string_at(b._db.host.data, b.rows * 8)).cast("q")]
    print(json.dumps({"rank": L.rank, "world": L.world, "source": L.rank_source, "ids": ids, "len": len(L)}))
except Exception as e:
    print(json.dumps({"error": "%%s: %%s" %% (type(e).__name__, e)}))
"""


def ranks_child(env, kw="{}"):
    e = dict((k, v) for k, v in os.environ.items() if k not in [v for t in gpufeed.RANK_VARIABLES for v in t[:2]])
    e.update(env)
    r = subprocess.run([sys.executable, "-c", RANKS_CHILD % {"tools": os.path.join(ROOT, "tools"), "ids": IDS, "kw": kw}],
                       capture_output=True, text=True, env=e, timeout=300)
    return json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else {"error": r.stderr[-300:]}


def test_ranks():
    for rv, wv, who in gpufeed.RANK_VARIABLES[:2] + gpufeed.RANK_VARIABLES[3:]:
        got = [ranks_child({rv: str(r), wv: "2"}) for r in range(2)]
        ids = [set(g.get("ids", [])) for g in got]
        check("%s/%s (%s) read when rank and world are not given: ranks 0 and 1 of 2, disjoint shards, all 20000 ids, "
              "equal batch counts" % (rv, wv, who),
              all(g.get("world") == 2 and g.get("source") == "%s/%s" % (rv, wv) for g in got) and [g["rank"] for g in got] == [0, 1]
              and not (ids[0] & ids[1]) and ids[0] | ids[1] == set(range(20000)) and got[0]["len"] == got[1]["len"] == 10,
              str([{k: v for k, v in g.items() if k != "ids"} for g in got]))
    g = ranks_child({"RANK": "1", "WORLD_SIZE": "2", "SLURM_PROCID": "0", "SLURM_NTASKS": "4"})
    check("torchrun's RANK/WORLD_SIZE come before Slurm's", g.get("rank") == 1 and g.get("world") == 2, str(g)[:200])
    g = ranks_child({"RANK": "1", "WORLD_SIZE": "2"}, "{'rank': 0, 'world': 1}")
    check("rank= and world= given: the environment is not read", g.get("world") == 1 and g.get("source") == "argument", str(g)[:200])
    g = ranks_child({})
    check("no launcher variables: rank 0 of 1", g.get("world") == 1 and g.get("source") == "default" and len(g.get("ids", [])) == 20000)
    for env, needle in (({"RANK": "x", "WORLD_SIZE": "2"}, "not integers"), ({"RANK": "2", "WORLD_SIZE": "2"}, "[0, world)")):
        g = ranks_child(env)
        check("%s: an error naming the variables (%s)" % (env, g.get("error", "")[:80]), needle in g.get("error", "") and "RANK" in g.get("error", ""))
    msg = error_of(lambda: gpufeed.Loader(IDS, rank=1, device=None), ValueError)
    check("rank without world: ValueError", msg is not None and "together" in msg, str(msg))

    # a split that would drop more than a batch of rows per rank: refused, naming the loss and the ways out
    msg = error_of(lambda: gpufeed.Loader(FLIGHTS, features=["dep_delay"], batch_rows=4096, rank=0, world=2, device=None))
    check("flights at world 2 (row groups of 65,536 and 9,096 rows): refused, naming the rows lost, unit_rows, elastic "
          "mode and even='pad' (%s)" % (msg or "")[:90],
          msg is not None and "would drop" in msg and "of the 336776 rows" in msg and "unit_rows" in msg
          and "global_batch_rows=8192" in msg and "even='pad'" in msg, msg or "accepted")
    msg = error_of(lambda: gpufeed.Loader(FLIGHTS, features=["dep_delay"], batch_rows=4096, rank=0, world=2, unit_rows=65536,
                                          device=None))
    check("... with unit_rows given: the same refusal, 58248 rows (17.3%) of epoch 0", msg is not None and "drop 58248 of" in msg
          and "336776 rows" in msg and "epoch 0" in msg and "unit_rows" in msg,
          msg or "accepted")
    ok = []
    for r in range(2):
        L = gpufeed.Loader(FLIGHTS, features=["dep_delay"], batch_rows=4096, rank=r, world=2, even="pad", device=None)
        ok.append((len(L), L.stats()["epoch_rows_dropped"]))
        L.close()
    check("even='pad' at world 2 is accepted (nothing dropped, equal batch counts)", ok[0] == ok[1] and ok[0][1] == 0, str(ok))
    # finer units where they help: ids.parquet's 4 units of 5000 rows cannot be shared by 5 ranks
    shards, sts = [], []
    for r in range(5):
        L = gpufeed.Loader(IDS, features=[gpufeed.Feature("id", "i64")], batch_rows=500, rank=r, world=5, device=None)
        shards.append([i for b in L for i in ids_of(b)])
        sts.append(L.stats())
        L.close()
    every = [i for sh in shards for i in sh]
    check("world 5 of ids.parquet (4 units of 5000 rows: too few for 5 ranks), batch_rows 500: finer units chosen "
          "(unit_rows %d), disjoint shards of equal batch counts, at most a batch of rows a rank dropped (%d an epoch)"
          % (sts[0]["unit_rows"], sts[0]["epoch_rows_dropped"]),
          all(st["unit_rows"] == 500 for st in sts) and len(every) == len(set(every)) and set(every) <= set(range(20000))
          and len(set(len(sh) for sh in shards)) == 1 and 20000 - len(every) == sts[0]["epoch_rows_dropped"] <= 5 * 500,
          str([(len(sh), st["unit_rows"]) for sh, st in zip(shards, sts)]))


RACE_CHILD = r"""
import random, sys, threading, time
sys.path.insert(0, %(tools)r)
import gpufeed
rng = random.Random(%(seed)d)
seen = {}
for i in range(%(runs)d):
    L = gpufeed.Loader(%(ids)r, features=["x", "k", "y"], batch_rows=100, workers=2, seed=i, shuffle_window=2, device=None)
    out, keep = [], []
    def run():
        try:
            for e in range(50):
                for b in L:
                    b.hash()
                    keep.append(b.__dlpack__())   # a tensor (capsule) alive across the close, dropped after it
                    del keep[:-1]
            out.append("end")
        except gpufeed.GpufeedError as ex:
            out.append("error: " + str(ex)[:40])
    t = threading.Thread(target=run)
    t.start()
    time.sleep(rng.random() * 0.03)
    L.close()
    t.join(60)
    r = "hang" if t.is_alive() else out[0]
    del keep[:]
    seen[r] = seen.get(r, 0) + 1
print(seen)
"""


def test_close_race(env=None, runs=40, what=""):
    r = subprocess.run([sys.executable, "-c", RACE_CHILD % {"tools": os.path.join(ROOT, "tools"), "ids": IDS, "seed": 11,
                                                           "runs": runs}], capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, **(env or {})))
    seen = eval(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else {}
    good = all(k == "end" or k.startswith("error: the Loader") or k.startswith("error: batch") for k in seen)
    check("close() from another thread at random times, %d runs%s: the iterating thread ends with a GpufeedError (or its "
          "end), no crash, no hang, tensors dropped after the close (%s)" % (runs, what, seen),
          r.returncode == 0 and sum(seen.values()) == runs and good,
          "exit %d %s" % (r.returncode, r.stderr[-300:]))


FORK_CHILD = r"""
import json, os, pickle, sys
sys.path.insert(0, %(tools)r)
import gpufeed
L = gpufeed.Loader(%(ids)r, features=["x", "k", "y"], batch_rows=1000, workers=2, seed=1, device=None)
it = iter(L)
first = [next(it).hash() for _ in range(3)]
rd, wr = os.pipe()
pid = os.fork()
if pid == 0:
    res = []
    for what, fn in (("iter", lambda: iter(L)), ("next", lambda: next(it)), ("len", lambda: len(L)),
                     ("state_dict", L.state_dict), ("stats", L.stats)):
        try:
            fn()
            res.append([what, None])
        except gpufeed.GpufeedError as e:
            res.append([what, str(e)])
    L.close()
    own = gpufeed.Loader(%(ids)r, features=["x", "k", "y"], batch_rows=1000, workers=2, seed=1, device=None)
    res.append(["own", sum(1 for _ in own)])      # the fix: a Loader opened in the child works
    own.close()
    os.write(wr, json.dumps(res).encode())
    os._exit(0)
os.close(wr)
_, status = os.waitpid(pid, 0)
child = json.loads(os.read(rd, 1 << 16).decode() or "[]")
rest = [b.hash() for b in it]
L2 = gpufeed.Loader(%(ids)r, features=["x", "k", "y"], batch_rows=1000, workers=2, seed=1, device=None)
ref = [b.hash() for b in L2]
try:
    pickle.dumps(L)
    pk = None
except TypeError as e:
    pk = str(e)
print(json.dumps({"child": child, "status": status, "same": first + rest == ref, "n": len(first + rest), "pickle": pk}))
"""


def test_fork():
    r = subprocess.run([sys.executable, "-c", FORK_CHILD % {"tools": os.path.join(ROOT, "tools"), "ids": IDS}],
                       capture_output=True, text=True, timeout=120)
    got = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else None
    if not got:
        check("the fork check ran", False, r.stderr[-400:])
        return
    msgs = [m for w, m in got["child"] if w != "own"]
    check("a forked child using the parent's Loader (iter, next, len, state_dict, stats): a GpufeedError naming the fork "
          "and the fix (open it in the worker, num_workers=0)",
          len(msgs) == 5 and all(m and "fork" in m and "num_workers=0" in m and "open the Loader" in m.replace("Open", "open") for m in msgs)
          and got["status"] == 0, str(got["child"])[:300])
    check("... the parent's epoch goes on whole and unchanged (20 batches, hashes as a fresh Loader's)", got["same"] and got["n"] == 20)
    check("... and a Loader opened in the child itself runs its epoch there (20 batches)", ["own", 20] in got["child"], str(got["child"])[-80:])
    check("pickling a Loader: TypeError saying why (%s)" % (got["pickle"] or "")[:60], got["pickle"] and "num_workers=0" in got["pickle"])


def test_mixtures():
    """dicts and (path, weight) pairs are mixtures (never paths): 3:1 in every batch of packed rows"""
    a, b = os.path.join(ROOT, "tests", "data", "tokens", "a_0.parquet"), os.path.join(ROOT, "tests", "data", "tokens", "b_0.parquet")
    feats = [gpufeed.Feature("input_ids", dtype="int32", pack=32)]
    for paths in ({a: 0.75, b: 0.25}, [(a, 3), ([b], 1)]):
        lo = gpufeed.Loader(paths, features=feats, batch_rows=8, workers=2, seed=1, device=None)
        bad = n = 0
        for batch in lo:
            v = memoryview(ctypes.string_at(batch._db.host.data, batch.rows * 32 * 4)).cast("i")
            fromb = sum(1 for r in range(batch.rows) if any(v[r * 32 + j] >= (1 << 30) for j in range(32)))
            bad += fromb != 2
            n += 1
        check("Loader(%s): a mixture, 2 of every 8 packed rows from b (%d batches)" % (type(paths).__name__, n), n > 0 and bad == 0, bad)
        lo.close()
    lo = gpufeed.Loader({a: 1, b: 1}, features=feats, batch_rows=8, until="longest", device=None)
    first = gpufeed.Loader({a: 1, b: 1}, features=feats, batch_rows=8, device=None)
    check("until='longest': more batches an epoch than until='first'", len(lo) > len(first) > 0, (len(lo), len(first)))
    lo.close()
    first.close()
    for paths, exc, word in (({a: "x"}, TypeError, "weight"), ({a: 0, b: 1}, ValueError, "weight"), ([a, (b, 1)], TypeError, "mixture"),
                             ({a: float("nan")}, ValueError, "weight")):
        msg = error_of(lambda: gpufeed.Loader(paths, features=feats, batch_rows=8, device=None), exc)
        check("Loader(%r): %s naming the %s" % (paths, exc.__name__, word), msg is not None and word in msg, str(msg))
    msg = error_of(lambda: gpufeed.Loader({a: 1}, features=feats, batch_rows=8, until="always", device=None), ValueError)
    check("until='always': ValueError", msg is not None and "until" in msg, str(msg))
    msg = error_of(lambda: gpufeed.Loader([], device=None), ValueError)
    check("Loader([]): ValueError", msg is not None and "empty" in msg)


def test_reference():
    """tools/README.md's Python API reference names every public argument, method and function"""
    import inspect
    text = open(os.path.join(ROOT, "tools", "README.md"), encoding="utf-8").read()
    ref = text[text.index("### Python API reference"):]
    ref = ref[:ref.index("\n## ")] if "\n## " in ref else ref
    missing = []
    for cls in (gpufeed.Loader, gpufeed.Feature):
        sig = inspect.signature(cls.__init__)
        params = [p.replace(annotation=inspect.Parameter.empty) for p in list(sig.parameters.values())[1:]]
        head = "gpufeed.%s(%s)" % (cls.__name__, ", ".join(str(p) for p in params).replace("'", '"'))
        if head not in " ".join(ref.split()):
            missing.append("the signature " + head)
        missing += ["%s(%s=)" % (cls.__name__, n) for n in list(sig.parameters)[1:] if "`%s`" % n not in ref and n + "=" not in ref]
    for cls in (gpufeed.Loader, gpufeed.Batch):
        for name, _ in inspect.getmembers(cls):
            if not name.startswith("_") and name not in ("UNITS",):
                if name not in ref:
                    missing.append("%s.%s" % (cls.__name__, name))
    for name in ("ranks_from_env", "cuda_available", "dtype_name", "load", "build", "library_path", "library_key",
                 "GpufeedError", "CPUFallbackWarning", "STATE_VERSION", "RANK_VARIABLES"):
        if "gpufeed." + name not in ref:
            missing.append("gpufeed." + name)
    public = [n for n in dir(gpufeed) if not n.startswith("_") and callable(getattr(gpufeed, n))
              and getattr(getattr(gpufeed, n), "__module__", "") == "gpufeed"]
    missing += ["gpufeed.%s (public, undocumented)" % n for n in public if n not in ref]
    check("tools/README.md's Python API reference: the Loader's and Feature's signatures as they are, every argument, "
          "member and public function", not missing, ", ".join(missing))
    undoc = [n for n in public if not (getattr(gpufeed, n).__doc__ or "").strip()]
    check("every public class and function has a docstring", not undoc, str(undoc))


LIB_CHILD = r"""
import sys
sys.path.insert(0, %(dir)r)
import gpufeed
gpufeed.load()
print(gpufeed.load()._name)
"""


def test_library():
    hdr = os.path.join(ROOT, "gpufeed.h")
    with tempfile.TemporaryDirectory() as td:
        copy = os.path.join(td, "copy")
        os.makedirs(copy)
        shutil.copy(os.path.join(ROOT, "tools", "gpufeed.py"), copy)
        shutil.copy(hdr, copy)
        env = dict(os.environ, GPUFEED_CACHE_DIR=os.path.join(td, "cache"))
        env.pop("GPUFEED_LIB", None)
        procs = [subprocess.Popen([sys.executable, "-c", LIB_CHILD % {"dir": d}], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd=td) for d in (os.path.join(ROOT, "tools"), copy)]
        outs = [p.communicate(timeout=600) + (p.returncode,) for p in procs]
        builds = sum(err.count("gpufeed: building ") for _, err, _ in outs)
        paths = set(out.strip() for out, _, _ in outs)
        check("the checkout's gpufeed.py and a copy beside the same header, started together: one build, one library "
              "(%s)" % ", ".join(sorted(paths)), builds == 1 and len(paths) == 1 and all(rc == 0 for _, _, rc in outs)
              and list(paths)[0].startswith(os.path.join(td, "cache")), str([(o[-200:], e[-300:]) for o, e, _ in outs]))
        r = subprocess.run([sys.executable, "-c", LIB_CHILD % {"dir": copy}], env=env, capture_output=True, text=True, timeout=300)
        check("a later process builds nothing", r.returncode == 0 and "building" not in r.stderr and r.stdout.strip() in paths)
        changed = os.path.join(td, "changed.h")
        with open(hdr, "rb") as f, open(changed, "wb") as g:
            g.write(f.read() + b"\n/* changed */\n")
        k = gpufeed.library_key(hdr, "cc")
        check("the key follows the header's bytes and the compiler, not its place",
              gpufeed.library_key(os.path.join(copy, "gpufeed.h"), "cc") == k and gpufeed.library_key(changed, "cc") != k
              and gpufeed.library_key(hdr, "clang") != k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpufeed-bench", default=os.path.join(ROOT, "build", "gpufeed-bench"))
    a = ap.parse_args()
    tests = [lambda: test_epochs(a.gpufeed_bench), test_lifetime, test_state, test_stats, test_ranks, test_close_race,
             test_fork, test_mixtures, test_library, test_reference]
    for t in tests:
        try:
            t()
        except Exception as e:  # a crash in one test is a failure, not the end
            import traceback
            traceback.print_exc()
            check("test raised %s" % type(e).__name__, False, str(e))
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
