# gpufeed -- build, test, demo and install targets. `make help` lists them.
# A target's line in `make help` is the `## ` comment after its name below.

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Werror -pedantic
PYTHON  ?= python3
VENV    := .venv
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2
PREFIX  ?= /usr/local
DESTDIR ?=

TOOLS := build/gpufeed-inspect build/gpufeed-cat build/gpufeed-dense build/gpufeed-bench build/gpufeed-cache
# the implementation compiled once (build/obj/gpufeed.o); programs that
# define GPUFEED_IMPLEMENTATION link it instead of compiling it again
IMPL_O  := build/obj/gpufeed.o
USE_O   := -DGPUFEED_IMPLEMENTATION_DONE -DGPUFEED_API=extern
# the tools read s3:// and https:// paths (libcurl loaded at run time)
TOOLDEFS := -DGPUFEED_CURL

.PHONY: all help tools demo check test mutation deps venv fixtures fuzz fuzz-all fuzz-gzip bench-codecs bench-dense bench-loader \
        bench-cache bench-gpu gpu-check install clean

all: tools  ## the tools (as make tools)

help:  ## this list
	@echo "make TARGET (the tests: tests/README.md; the benchmarks: tools/bench/README.md)"
	@grep -E '^[a-z][a-z0-9-]*:.*## ' Makefile | sed 's/:.*## /|/' | awk -F'|' '{ printf "  %-14s %s\n", $$1, $$2 }'

tools: $(TOOLS)  ## build/gpufeed-inspect, -cat, -dense, -bench and -cache (-O2)

$(IMPL_O): gpufeed.h
	@mkdir -p build/obj
	@printf '#define GPUFEED_IMPLEMENTATION\n#include "gpufeed.h"\n' > build/obj/gpufeed.c
	$(CC) $(CFLAGS) $(WARN) $(TOOLDEFS) -I. -c build/obj/gpufeed.c -o $@

build/%: tools/%.c tools/gf_cli.h gpufeed.h $(IMPL_O)
	$(CC) $(CFLAGS) $(WARN) $(TOOLDEFS) $(USE_O) -I. $< $(IMPL_O) -o $@ -lpthread -lm -ldl

build/read_dense: examples/read_dense.c gpufeed.h $(IMPL_O)
	$(CC) $(CFLAGS) $(WARN) $(TOOLDEFS) $(USE_O) -I. $< $(IMPL_O) -o $@ -lpthread -lm -ldl

build/train_mlp: examples/train_mlp.cu gpufeed.h
	nvcc -O2 -arch=native $< -o $@

demo: tools build/read_dense  ## the main job: inspect and print the flights data, then 3 shuffled epochs through the loader and its cache
	build/gpufeed-inspect examples/data/flights.parquet | head -32
	@echo
	@echo "first 5 rows (gpufeed-cat head):"
	build/gpufeed-cat head examples/data/flights.parquet
	@echo
	@echo "the loader: 3 epochs, 2 workers, shuffled, with a tensor cache (built in epoch 0, then served):"
	@rm -rf build/demo-cache
	build/gpufeed-bench examples/data/flights.parquet --batch 4096 --workers 2 --seed 1 --epochs 3 --shuffle-window 2 --cache build/demo-cache
	@echo
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null 2>&1; then \
	  echo "GPU found: training a small MLP fed by gpufeed (examples/train_mlp.cu)"; \
	  $(MAKE) -s build/train_mlp && build/train_mlp; \
	else \
	  echo "no GPU: dense batches on the CPU (examples/read_dense.c)"; \
	  build/read_dense; \
	fi

check:  ## the quick suite for the edit-test loop (tests/run.sh --quick): no network, no .venv needed
	@bash tests/run.sh --quick

test: deps venv  ## everything CI runs (installs what it needs on a fresh machine)
	@bash tests/run.sh

install: tools  ## the header, the tools and the Python binding under PREFIX (default /usr/local; DESTDIR too)
	@site=$$($(PYTHON) -c 'import sysconfig, sys; print(sysconfig.get_path("purelib", vars={"base": sys.argv[1], "platbase": sys.argv[1]}))' '$(PREFIX)') && \
	  mkdir -p '$(DESTDIR)$(PREFIX)/include' '$(DESTDIR)$(PREFIX)/bin' "$(DESTDIR)$$site/_gpufeed" && \
	  cp gpufeed.h '$(DESTDIR)$(PREFIX)/include/gpufeed.h' && \
	  cp $(TOOLS) '$(DESTDIR)$(PREFIX)/bin/' && \
	  cp tools/gpufeed.py "$(DESTDIR)$$site/gpufeed.py" && cp gpufeed.h "$(DESTDIR)$$site/_gpufeed/gpufeed.h" && \
	  echo "installed $(DESTDIR)$(PREFIX)/include/gpufeed.h, $(DESTDIR)$(PREFIX)/bin/gpufeed-{inspect,cat,dense,bench,cache}," && \
	  echo "  $(DESTDIR)$$site/gpufeed.py (import gpufeed; it builds its library into ~/.cache/gpufeed on first use)"

# System packages (clang for sanitizers and libFuzzer) and the Python venv
# with the pinned writers used to make and check the fixture corpus.
deps:  ## system packages the whole suite needs (apt-get, only what is missing)
	@echo "deps: system packages (tools/install_deps.sh; apt-get only for what is missing)"
	@bash tools/install_deps.sh

venv: $(VENV)/.stamp  ## .venv with the pinned Python packages of tools/requirements.txt
$(VENV)/.stamp: tools/requirements.txt
	@echo "venv: .venv with the pinned Python packages of tools/requirements.txt (pip; on a fresh clone this takes minutes)"
	@bash tools/install_deps.sh venv
	@touch $@
	@echo "venv: ready"

fixtures: venv  ## the generated corpus (pyarrow, DuckDB, Polars, fastparquet files) into build/fixtures
	$(VENV)/bin/python tests/gen_fixtures.py build/fixtures

mutation:  ## make check on one-token mutants of gpufeed.h (tests/mutation.py; hours; not part of make test)
	@$(PYTHON) tests/mutation.py

fuzz: deps  ## the whole-file libFuzzer target for FUZZ_SECONDS (default 60)
	@mkdir -p build/fuzz-corpus
	clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_file.c -o build/fuzz_file
	cp -n tests/data/*.parquet tests/fuzz/* build/fuzz-corpus/ 2>/dev/null || true
	build/fuzz_file -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -rss_limit_mb=2048 -dict=tests/fuzz.dict build/fuzz-corpus

fuzz-all: deps venv  ## every per-decoder target and whole files, FUZZ_SECONDS each
	bash tests/fuzz_all.sh $(FUZZ_SECONDS) $(FUZZ_JOBS)

fuzz-gzip: deps  ## the GZIP codec's libFuzzer target for FUZZ_SECONDS
	@mkdir -p build/fuzz-gzip
	clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_gzip.c -o build/fuzz_gzip
	cp -n tests/fuzz/gzip/*.gz tests/fuzz/gzip/*.z build/fuzz-gzip/ 2>/dev/null || true
	build/fuzz_gzip -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 build/fuzz-gzip

bench-codecs: deps  ## our codecs against libsnappy, liblz4, zlib, libdeflate and libzstd
	@mkdir -p build
	$(CC) -O2 $(WARN) -I. tools/bench/bench_codecs.c -o build/bench_codecs -lsnappy -llz4 -lz -ldeflate -lzstd -lpthread -lm
	build/bench_codecs

bench-dense: tools venv  ## Parquet to dense float32 against pyarrow to NumPy
	$(VENV)/bin/python tools/bench/bench_dense.py

bench-loader: tools venv  ## the loader: workers, shuffled against sequential, against the PyTorch DataLoader, ranks
	$(VENV)/bin/python tools/bench/bench_loader.py
	$(VENV)/bin/python tools/bench/bench_peers.py
	$(VENV)/bin/python tools/bench/bench_elastic.py

bench-cache: tools venv  ## cached epochs against memcpy and against the decode path
	$(VENV)/bin/python tools/bench/bench_cache.py

gpu-check:  ## on a GPU machine: the GPU tests (also under compute-sanitizer) and the examples
	bash tests/gpu_check.sh

bench-gpu:  ## on a GPU machine: gpufeed against the PyTorch DataLoader feeding a step kernel
	python3 tools/bench/bench_gpu.py

clean:  ## remove build/
	rm -rf build
