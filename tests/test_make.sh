#!/usr/bin/env bash
# The Makefile as a user meets it: `make help` lists every target with a
# line each; `make install PREFIX=DIR` puts the header, the five tools and
# the Python binding there, and what it installed works from there; the
# demo rebuilds nothing once built and shows the loader at work.
#
#   bash tests/test_make.sh      (tests/run.sh --quick runs it after the
#                                 builds: make tools build/read_dense)
# Last line: "N passed, N failed". No .venv needed.
set -u
cd "$(dirname "$0")/.."
T=build/make-test; rm -rf $T; mkdir -p $T
P=0; F=0
ok()   { P=$((P + 1)); echo "PASS $1"; }
bad()  { F=$((F + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
unset MAKEFLAGS MFLAGS   # the outer make's flags (make check) are not this test's

# ---- make help ---------------------------------------------------------------------------
make -s help > $T/help.txt 2>&1; rc=$?
check "make help: exit 0" test $rc -eq 0
phony=$(sed -n '/^\.PHONY:/,/[^\\]$/p' Makefile | sed 's/^\.PHONY://; s/\\//g' | tr ' ' '\n' | grep -v '^$')
missing=""
for t in $phony; do grep -qE "^  $t +[^ ]" $T/help.txt || missing="$missing $t"; done
check "make help: a line with a description for every target of .PHONY (missing:${missing:- none})" test -z "$missing"
check "make help: at least the targets a user starts with" bash -c "for t in help demo check test install tools clean; do grep -qE \"^  \$t \" $T/help.txt || exit 1; done"

# ---- make install ------------------------------------------------------------------------
PFX=$PWD/$T/prefix
make -s install PREFIX="$PFX" > $T/install.out 2>&1; rc=$?
check "make install PREFIX=...: exit 0" test $rc -eq 0
check "make install: the header, byte for byte" cmp -s gpufeed.h "$PFX/include/gpufeed.h"
for t in inspect cat dense bench cache; do
  check "make install: bin/gpufeed-$t runs (--version)" bash -c "'$PFX/bin/gpufeed-$t' --version | grep -q '^gpufeed-$t '"
done
check "make install: the installed gpufeed-inspect reads the flights data (rowcount 336776)" \
  test "$("$PFX/bin/gpufeed-inspect" rowcount examples/data/flights.parquet)" = 336776
printf '#include <gpufeed.h>\nint main(void) { gpufeed_loader_desc d = {0}; return (int)d.epochs + GPUFEED_VERSION_MAJOR * 0; }\n' > $T/uses.c
check "make install: a program compiles against include/gpufeed.h" cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$PFX/include" $T/uses.c
site=$(python3 -c 'import sysconfig, sys; print(sysconfig.get_path("purelib", vars={"base": sys.argv[1], "platbase": sys.argv[1]}))' "$PFX")
check "make install: the Python binding and its header in site-packages" bash -c "[ -f '$site/gpufeed.py' ] && cmp -s gpufeed.h '$site/_gpufeed/gpufeed.h'"
(cd $T && PYTHONPATH="$site" python3 -c "
import gpufeed, os, sys
h = gpufeed._header()
sys.exit(0 if h == os.path.join(sys.argv[1], '_gpufeed', 'gpufeed.h') and gpufeed.__version__ else 1)" "$site") 2> $T/py.err
check "make install: import gpufeed finds the installed header (not the checkout's)" test $? -eq 0
make -s install PREFIX="$PFX" DESTDIR="$PWD/$T/stage" > /dev/null 2>&1
check "make install DESTDIR=...: the same tree under DESTDIR" bash -c "[ -f '$PWD/$T/stage$PFX/include/gpufeed.h' ] && [ -x '$PWD/$T/stage$PFX/bin/gpufeed-cat' ]"

# ---- make demo ---------------------------------------------------------------------------
make -s tools build/read_dense > $T/build.out 2>&1   # what is not built yet (nothing, after make check's builds)
make -q tools build/read_dense; rc=$?
check "make demo after a build: nothing to rebuild (make -q tools build/read_dense)" test $rc -eq 0
make -n demo > $T/demo.plan 2>&1
check "make demo after a build: no compiler in its plan (make -n demo)" bash -c "grep -q gpufeed-bench $T/demo.plan && ! grep -qE '(^| )(cc|gcc|clang|\\\$\\(CC\\)) ' $T/demo.plan"
make -s demo > $T/demo.out 2>&1; rc=$?
check "make demo: exit 0" test $rc -eq 0
check "make demo: the cache's effect in one line" grep -q '^cache effect: epochs 1-2 from the cache' $T/demo.out
check "make demo: a verdict, and dense batches on the CPU or a GPU" bash -c "grep -q '^verdict: ' $T/demo.out && grep -qE '^(no GPU|GPU found)' $T/demo.out"

echo "$P passed, $F failed"
[ $F -eq 0 ]
