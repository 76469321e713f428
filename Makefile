# The two set-up commands of the README. Both install what is missing first.
#   make run   - install, build the CLI (release), run `latlab run` on the default device,
#                writing latlab-result.json and the HTML report latlab-report.html
#   make test  - install, build (dev, warnings as errors), run every test (ctest)
# Also: make install-check - plain CMake build, install, example built against it
#       make fuzz - libFuzzer targets (clang, ASan+UBSan), FUZZ_SECONDS (default 60) each
SHELL := /bin/bash
export XDG_RUNTIME_DIR ?= /tmp/latlab-xdg-$(shell id -u)

.PHONY: run test deps build build-cli build-dev asan tsan fuzz bench install-check clean

deps:
	@scripts/install-deps.sh
	@mkdir -p -m 700 $(XDG_RUNTIME_DIR)

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release

build-dev: deps
	cmake --preset dev >/dev/null
	cmake --build --preset dev

# Only the CLI: `make run` compiles what it runs, not the tests.
build-cli: deps
	cmake --preset release >/dev/null
	cmake --build --preset release --target latlab

run: build-cli
	build/release/apps/latlab/latlab run --out latlab-result.json --report latlab-report.html

test: build-dev
	ctest --preset dev

# The asan test preset sets intercept_tls_get_addr=0: GCC 12's runtime can take a
# dlopened driver's (Mesa's) dynamic TLS block for a pre-2.25 glibc header and
# LeakSanitizer's tracer then crashes at exit ("Tracer caught signal 11"), now and then.
asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan
	ctest --preset asan

# Only the threaded tests run under TSan (ctest's threads label), so only their
# binaries are built: the rest of the tree under TSan cost CI minutes for nothing.
TSAN_TARGETS := latlab_thread_tests latlab_profiler_protocol_tests
tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan --target $(TSAN_TARGETS)
	ctest --preset tsan

fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz
	bench/fuzz/run.sh

bench: deps
	cmake --preset release >/dev/null
	cmake --build --preset release --target latlab_bench
	build/release/bench/latlab_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

install-check: deps
	scripts/check-install.sh

clean:
	rm -rf build
