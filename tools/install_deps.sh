#!/usr/bin/env bash
# Installs what `make test` needs on a fresh Debian machine:
#   - system packages (compilers with sanitizer and libFuzzer runtimes, the
#     codec libraries the tests compare against, Python's venv module)
#     through apt-get when they are missing;
#   - with the argument `venv`: a local .venv with the pinned Python
#     packages of tools/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v clang >/dev/null 2>&1 || need+=(clang)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# the ZSTD test makes its frames with the system libzstd (the header needs it
# only with GPUFEED_USE_LIBZSTD)
[ -f /usr/include/zstd.h ] || need+=(libzstd-dev)
# libFuzzer / sanitizer runtimes that ship separately from clang on Debian
if command -v clang >/dev/null 2>&1; then
  probe=$(mktemp -d)
  echo 'int LLVMFuzzerTestOneInput(const unsigned char*d,unsigned long n){(void)d;(void)n;return 0;}' > "$probe/p.c"
  if ! clang -fsanitize=fuzzer,address "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
    v=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
    need+=("libclang-rt-${v}-dev")
  fi
  rm -rf "$probe"
fi
# system codec libraries: the opt-in GPUFEED_USE_* builds, the differential
# codec tests and the codec benchmark link them
for pkg in zlib1g-dev:zlib.h libzstd-dev:zstd.h liblz4-dev:lz4.h libsnappy-dev:snappy-c.h \
           libdeflate-dev:libdeflate.h libbrotli-dev:brotli/decode.h; do
  [ -f "/usr/include/${pkg#*:}" ] || need+=("${pkg%%:*}")
done
# libcurl: GPUFEED_CURL loads libcurl.so.4 at run time (no headers needed); curl.h is
# for tests/test_curl_abi.c only, which checks gpufeed's declarations against it
[ -f /usr/include/curl/curl.h ] || ls /usr/include/*/curl/curl.h > /dev/null 2>&1 || need+=(libcurl4-openssl-dev)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  need+=(python3-venv)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "install_deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi

if [ "${1:-}" = "venv" ]; then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -r tools/requirements.txt
fi
