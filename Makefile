# StrataGraph: thin wrapper over CMake + Ninja. Every target that builds installs what is
# missing first (scripts/install-deps.sh is a no-op when all is there).
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=
LAUNCHER := $(shell command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

.PHONY: all deps build test test-fault test-long asan tsan tsan-core demo bench clean format

all: build

deps:
	@bash scripts/install-deps.sh

# Configured again when the Makefile changes, so a build directory picks up new flags.
$(BUILD)/build.ninja: Makefile | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithAssert -DSTRATA_BUILD_PYTHON=ON $(LAUNCHER) $(CMAKE_FLAGS)
	@touch $@

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The test command of the README and of CI. Long runs carry the ctest label "long" and are
# excluded here; `make test-long` runs them. The Python package's pytest suite is the ctest
# test Python.pytest (label "python"), on the extension this build just made.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE long

# The fault-injection suites (ctest label "fault"; `make test` runs them too).
test-fault: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L fault

test-long: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L long

asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=address,undefined $(LAUNCHER)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE long

# detect_deadlocks=0: a batch holds one lock per subgraph it touches, often more than the 64
# held locks TSan's deadlock detector can track; lock order is ascending by construction.
# Suites labelled "tbb" (CMakeLists.txt) are left out: Debian's libtbb is not built with TSan,
# so every parallel kernel reports races.
tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithAssert -DSTRATA_SANITIZE=thread $(LAUNCHER)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 detect_deadlocks=0" ctest --output-on-failure -j $(JOBS) -LE "long|tbb"

# The in-memory tier's concurrency suites alone under TSan (a few minutes; CI runs it after
# `make test`). The reader-age test runs 50 more times: the race it once hid showed in about
# one run in 40 (docs/benchmarks.md, "a snapshot older than a subgraph"). Of the disk suites,
# the writers beside flushes and compactions, the wide differential and crash cases (the
# pipelined build beside the background threads, and in recovery), and the full-disk and
# failed-sync cases (the background threads' error paths); the power-loss rounds (every
# thread's file operations recorded in one journal).
# Without address randomization where the system allows it: GCC 12's TSan is known to fail to
# map its shadow memory under kernels with vm.mmap_rnd_bits above 28 (this machine has 28).
NO_ASLR := $(shell setarch $$(uname -m) -R true >/dev/null 2>&1 && echo setarch $$(uname -m) -R)
TSAN_CORE := concurrency_test version_chain_test head_filters_test append_area_test walk_registry_test subgraph_directory_test memgraph_differential_test
tsan-core: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithAssert -DSTRATA_SANITIZE=thread $(LAUNCHER)
	cmake --build build-tsan -j $(JOBS) --target $(TSAN_CORE) compactor_test disk_differential_test crash_test
	cd build-tsan/bin && $(NO_ASLR) sh -c 'for t in $(TSAN_CORE); do \
	  TSAN_OPTIONS="halt_on_error=1 detect_deadlocks=0" ./$$t --gtest_brief=1 || exit 1; done'
	cd build-tsan/bin && TSAN_OPTIONS="halt_on_error=1 detect_deadlocks=0" $(NO_ASLR) ./concurrency_test \
	  --gtest_brief=1 --gtest_filter='*ReadersOfManyAges*' --gtest_repeat=50
	cd build-tsan/bin && TSAN_OPTIONS="halt_on_error=1 detect_deadlocks=0" $(NO_ASLR) ./compactor_test \
	  --gtest_brief=1 --gtest_filter='*Part*'
	cd build-tsan/bin && TSAN_OPTIONS="halt_on_error=1 detect_deadlocks=0" $(NO_ASLR) ./disk_differential_test \
	  --gtest_brief=1 --gtest_filter='DiskStore.TwoWriters*:DiskStore.CheapOps*:DiskStore.CompactionMoves*:DiskIdle.*:*Wide*:DiskFull.*:FailedSync.*'
	cd build-tsan/bin && TSAN_OPTIONS="halt_on_error=1 detect_deadlocks=0" $(NO_ASLR) ./crash_test \
	  --gtest_brief=1 --gtest_filter='PowerLoss.*'

demo: build
	bash scripts/demo.sh

bench: build
	bash scripts/bench.sh

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf $(BUILD) build-asan build-tsan
