# gpufeed -- build, test and demo targets.
#   make demo    the main job: inspect + print the committed flights dataset,
#                then 3 shuffled epochs through the loader and its cache
#   make check   the quick suite, for the edit-test loop (about 3 minutes: layout,
#                unit, bad input, nested, loader, cache, uploader, DLPack, tools,
#                fuzz replay; no apt-get,
#                no pip, no network, no .venv needed)
#   make test    everything CI runs (installs what it needs on a fresh machine)
#   make mutation      make check on each of 113 one-token mutants of gpufeed.h (in a
#                copy, build/mutation/work): the score and the survivors (about
#                two hours on 2 cores; not part of make test)
#   make tools   build/gpufeed-inspect, -cat, -dense, -bench and -cache
#   make bench-dense   Parquet -> dense float32 vs pyarrow -> NumPy
#   make bench-loader  the loader: workers, shuffled vs sequential, vs PyTorch DataLoader, ranks
#   make bench-cache   cached epochs vs memcpy and vs the decode path
#   make bench-codecs  our codecs vs libsnappy/liblz4/zlib/libdeflate/libzstd
#   make bench-gpu     GPU figures (needs a GPU); make gpu-check: the GPU tests
#   make fuzz    run the whole-file libFuzzer target for FUZZ_SECONDS (default 60)
#   make fuzz-all      every per-decoder target + whole files, FUZZ_SECONDS each
#   make fuzz-gzip     the GZIP codec's libFuzzer target, as long
#   (tools/bench/README.md: the benchmarks; tests/README.md: the suites)

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Werror -pedantic
SAN     := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
PYTHON  ?= python3
VENV    := .venv
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2

TOOLS := build/gpufeed-inspect build/gpufeed-cat build/gpufeed-dense build/gpufeed-bench build/gpufeed-cache

.PHONY: all tools demo check test mutation deps venv fixtures fuzz fuzz-all fuzz-gzip bench-codecs bench-dense bench-loader bench-cache bench-gpu gpu-check clean

all: tools

tools: $(TOOLS)

build/%: tools/%.c tools/gf_cli.h gpufeed.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -DGPUFEED_CURL -I. $< -o $@ -lpthread -lm -ldl

demo: tools
	build/gpufeed-inspect examples/data/flights.parquet | head -40
	@echo
	@echo "first 5 rows (gpufeed-cat head):"
	build/gpufeed-cat head examples/data/flights.parquet
	@echo
	@echo "the loader: 3 epochs, 2 workers, shuffled, with a tensor cache (built in epoch 0, then served):"
	rm -rf build/demo-cache
	build/gpufeed-bench examples/data/flights.parquet --batch 4096 --workers 2 --seed 1 --epochs 3 --shuffle-window 2 --cache build/demo-cache
	@echo
	@if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null 2>&1; then \
	  echo "GPU found: training a small MLP fed by gpufeed (examples/train_mlp.cu)"; \
	  nvcc -O2 -arch=native examples/train_mlp.cu -o build/train_mlp && build/train_mlp; \
	else \
	  echo "no GPU: dense batches on the CPU (examples/read_dense.c)"; \
	  $(CC) -O2 examples/read_dense.c -o build/read_dense -lpthread -lm && build/read_dense; \
	fi

# System packages (clang for sanitizers and libFuzzer) and the Python venv
# with the pinned writers used to make and check the fixture corpus.
deps:
	@echo "deps: system packages (tools/install_deps.sh; apt-get only for what is missing)"
	@bash tools/install_deps.sh

venv: $(VENV)/.stamp
$(VENV)/.stamp: tools/requirements.txt
	@echo "venv: .venv with the pinned Python packages of tools/requirements.txt (pip; on a fresh clone this takes minutes)"
	@bash tools/install_deps.sh venv
	@touch $@
	@echo "venv: ready"

fixtures: venv
	$(VENV)/bin/python tests/gen_fixtures.py build/fixtures

# the quick suite: builds what it needs (-O0 sanitizer builds, in parallel)
check:
	@bash tests/run.sh --quick

test: deps venv
	@bash tests/run.sh

# one-token mutants of gpufeed.h, each under make check (GF_FAIL_FAST=1) in
# a copy of the tree; fails under 90% caught or on an unexplained survivor
mutation:
	@$(PYTHON) tests/mutation.py

fuzz: deps
	@mkdir -p build/fuzz-corpus
	clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_file.c -o build/fuzz_file
	cp -n tests/data/*.parquet tests/fuzz/* build/fuzz-corpus/ 2>/dev/null || true
	build/fuzz_file -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -rss_limit_mb=2048 -dict=tests/fuzz.dict build/fuzz-corpus

fuzz-all: deps venv
	bash tests/fuzz_all.sh $(FUZZ_SECONDS) $(FUZZ_JOBS)

bench-codecs: deps
	@mkdir -p build
	$(CC) -O2 $(WARN) -I. tools/bench/bench_codecs.c -o build/bench_codecs -lsnappy -llz4 -lz -ldeflate -lzstd -lpthread -lm
	build/bench_codecs

fuzz-gzip: deps
	@mkdir -p build/fuzz-gzip
	clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_gzip.c -o build/fuzz_gzip
	cp -n tests/fuzz/gzip/*.gz tests/fuzz/gzip/*.z build/fuzz-gzip/ 2>/dev/null || true
	build/fuzz_gzip -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 build/fuzz-gzip

bench-dense: tools venv
	$(VENV)/bin/python tools/bench/bench_dense.py

bench-loader: tools venv
	$(VENV)/bin/python tools/bench/bench_loader.py
	$(VENV)/bin/python tools/bench/bench_peers.py
	$(VENV)/bin/python tools/bench/bench_elastic.py

bench-cache: tools venv
	$(VENV)/bin/python tools/bench/bench_cache.py

# on a GPU machine: GPU tests (also under compute-sanitizer) and the example
gpu-check:
	bash tests/gpu_check.sh

# on a GPU machine: the starvation benchmark (gpufeed vs PyTorch DataLoader)
bench-gpu:
	python3 tools/bench/bench_gpu.py

clean:
	rm -rf build
