# kassign developer entry points. The README's quick start is `make demo` and `make test`;
# both set up everything they need (venv, dependencies, the compiled extension) on a fresh machine.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: venv tools develop demo test test-rust test-python test-interpreters test-aarch64 test-ft test-fast test-pypy test-long test-soak test-java-diff test-server-diff bench bench-core bench-wire bench-fleet bench-smoke bench-full \
	bench-rebalance bench-snapshot clean dist dist-smoke broker-plugin broker-rust-targets lint lint-python lint-rust fmt docs docs-serve docs-images

# The venv with pinned dev/test dependencies (requirements-dev.txt).
$(VENV)/.deps: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

venv: $(VENV)/.deps

# Pinned build, lint and docs tools (requirements-tools.txt) in the same venv.
$(VENV)/.tools: requirements-tools.txt $(VENV)/.deps
	$(PIP) install --quiet -r requirements-tools.txt
	touch $@

tools: $(VENV)/.tools

# Build the Rust extension (release mode) and install kassign into the venv, editable.
develop: $(VENV)/.deps
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet --extras dev

# The main job: the fleet report (PySpark, local[*]) on the bundled default fleet of 300 synthetic
# groups: every strategy on every group -> out/fleet/report.html, results.parquet, console summary.
# Its set-up records the Spark driver JVM's class archive once (python -m kassign.fleet.warmup: a
# small run of the job; kassign.fleet.classarchive), so the job's Spark start maps Spark's classes.
DEMO_OUT ?= out/fleet
demo: develop
	$(PY) -m kassign.fleet.warmup
	$(VENV)/bin/kassign fleet --out $(DEMO_OUT) --churn 4

# The core crate's tests (rust/core: no Python, no JVM); the bindings are tested through Python
# and java/broker's Maven tests.
test-rust:
	cargo test --quiet -p kassign-core

# The broker plugin's jar first: tests/broker/test_broker_plugin.py loads it into the coordinator's classes
# and into real brokers.
test-python: develop broker-plugin
	$(PY) -m pytest -q

# All tests: Rust unit tests, the broker plugin's build and Java tests, then the Python suite (unit,
# property, broker, Spark), then the interpreter matrix (x86-64, then aarch64 under qemu).
test: test-rust test-python test-interpreters test-aarch64

# The interpreter matrix (docs/interpreters.md): the abi3 wheel on CPython 3.10, 3.12, 3.13 (pyenv)
# and 3.14, 3.15 (a Debian sid chroot): the boundary tests on each, and the same seeded groups'
# digest on each and on 3.11. Environments cached in ${KASSIGN_CACHE:-~/.cache/kassign}/interpreters.
test-interpreters: $(VENV)/.tools
	PATH="$(abspath $(VENV))/bin:$$PATH" MATURIN=$(VENV)/bin/maturin DIST_TARGET_DIR=$(DIST_TARGET_DIR) \
		scripts/interpreters/run

# The matrix's aarch64 leg (docs/interpreters.md): the aarch64 wheel on Debian's arm64 CPython 3.11
# under qemu-user: its smoke test, the broker-free boundary tests and the seeded groups' digest
# against the x86_64 wheel's (scripts/interpreters/aarch64, scripts/foreign-wheel). Uses dist/'s
# wheels when they are fresh, else builds both with `make dist`'s cargo target directories.
test-aarch64: $(VENV)/.tools
	@$(call ensure-rust-targets,aarch64-unknown-linux-gnu,make test-interpreters (the x86-64 matrix alone))
	PATH="$(abspath $(VENV))/bin:$$PATH" MATURIN=$(VENV)/bin/maturin PYTHON=$(PYTHON) \
		DIST_TARGET_DIR=$(DIST_TARGET_DIR) DIST_AARCH64_TARGET_DIR=$(DIST_AARCH64_TARGET_DIR) \
		scripts/interpreters/aarch64

# The free-threaded CPython 3.14 wheel (docs/platforms.md, "Free-threaded CPython 3.14"): builds a
# --disable-gil CPython 3.14 once (scripts/ft-python; needs its source: a cached tarball, Debian's
# source package or KASSIGN_CPYTHON_SRC), the cp314t wheel into target/ft-dist, then scripts/ft-wheel:
# the GIL check, the smoke test, the boundary tests and the seeded digest against this tree's
# .venv. Not part of `make test`: a fresh machine here cannot download CPython's source.
FT_DIST_DIR ?= target/ft-dist
DIST_FT_TARGET_DIR ?= target/dist-ft
test-ft: $(VENV)/.tools develop
	rm -rf $(FT_DIST_DIR)
	ftpy="$$(scripts/ft-python 3.14)" && CARGO_TARGET_DIR=$(DIST_FT_TARGET_DIR) PATH="$(abspath $(VENV))/bin:$$PATH" \
		$(VENV)/bin/maturin build --release --quiet --out $(FT_DIST_DIR) --compatibility manylinux2014 --zig --interpreter "$$ftpy"
	DIST_DIR=$(FT_DIST_DIR) FT_REFERENCE_PYTHON=$(abspath $(PY)) PYTHON=$(PYTHON) scripts/ft-wheel

# The broker soak and crash tests (tests/broker/test_broker_soak.py; figures in out/soak-churn.json,
# out/soak-crash.json and RELIABILITY.md), deselected from `make test`; .ci/run runs this target.
# KASSIGN_SOAK_GROUPS (default 50) and KASSIGN_SOAK_SECONDS (default 180, the CI length; 600 for the
# full run) size them.
test-soak: develop broker-plugin
	$(PY) -m pytest -q -s -m soak tests/broker/test_broker_soak.py

# The fast unit tests alone: no broker, no Spark, nothing marked slow (tests/conftest.py marks
# broker tests by the fixtures they use), 10 hypothesis cases per property.
FAST_MARKERS := not broker and not spark and not slow
test-fast: develop
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-fast} $(PY) -m pytest -q -m "$(FAST_MARKERS)"

# PyPy 3.11 (Debian trixie's pypy3, in a debootstrap root kept under ${KASSIGN_CACHE:-~/.cache/kassign}):
# builds the pp311 wheel and runs the boundary tests there (scripts/pypy-test; docs/cpython-layout.md).
# Needs root (debootstrap, chroot). Not part of `make test`.
test-pypy: $(VENV)/.deps
	scripts/pypy-test

# The long reliability run (RELIABILITY.md): the property suite under the `long` hypothesis profile
# (>= 100k cases in total). Case counts per test are appended to out/cases-long.jsonl.
test-long: develop
	mkdir -p out
	HYPOTHESIS_PROFILE=long KASSIGN_CASE_LOG=$(abspath out/cases-long.jsonl) \
		$(PY) -m pytest -q tests/properties/test_oracles_selftest.py $(wildcard tests/properties/test_properties*.py)

# Differential testing against Apache Kafka's Java assignors on 10k seeded scenarios
# (tests/support/java_diff.py; figures in docs/java_differential.md). `make test` runs 1500 of them.
test-java-diff: develop
	mkdir -p out
	KASSIGN_DIFF_SCENARIOS=10000 KASSIGN_DIFF_JSON=$(abspath out/java-diff.json) \
		$(PY) -m pytest -q -s tests/differential/test_java_differential.py

# Differential testing of server-uniform / server-range against the broker's own assignors
# (kafka-group-coordinator 4.4.0) on 10k seeded scenarios (peers/server_diff.py; figures in
# docs/server_assignors.md). `make test` runs 1500 of them.
test-server-diff: develop
	mkdir -p out
	KASSIGN_SERVER_DIFF_SCENARIOS=10000 KASSIGN_SERVER_DIFF_JSON=$(abspath out/server-diff.json) \
		$(PY) -m pytest -q -s tests/differential/test_server_differential.py

bench: develop
	$(PY) -m pytest benches/bench_grid.py --benchmark-only -q

# The fleet job at scale (docs/fleet.md, "Measured performance"): FLEET_GROUPS synthetic groups (default 10,000),
# 4 churn rounds, local[*]; wall time and peak RSS of the whole process tree, with the load average.
# FLEET_STRATEGIES: comma-separated labels (default: every label the job runs). The demo's job is
# `make bench-fleet FLEET_GROUPS=300`.
FLEET_GROUPS ?= 10000
FLEET_STRATEGIES ?=
FLEET_DIR := out/fleet-bench-$(FLEET_GROUPS)
bench-fleet: develop
	mkdir -p $(FLEET_DIR)
	test -e $(FLEET_DIR)/snap/snapshot.json || $(VENV)/bin/kassign synth --groups $(FLEET_GROUPS) --out $(FLEET_DIR)/snap
	uptime
	$(PY) -m kassign.fleet.measure --json $(FLEET_DIR)/measure.json -- \
		$(VENV)/bin/kassign fleet --snapshot $(FLEET_DIR)/snap --out $(FLEET_DIR)/report --churn 4 \
		$(if $(FLEET_STRATEGIES),--strategies $(FLEET_STRATEGIES))
	uptime

# Rust-core timings of the sticky engine on the benchmark shapes of docs/benchmark-shapes.md (no Python).
bench-core:
	cargo bench -p kassign-core --bench core

# The leader's wire path (kassign::wire::assign) with no Python in the loop, whole and by phase, on
# the 1M-partition round 2 (WIRE_SCENARIO, WIRE_STRATEGY to change it).
WIRE_SCENARIO ?= java-large-uniform/round2
WIRE_STRATEGY ?= sticky
bench-wire: develop
	mkdir -p out
	$(PY) benches/wire_dump.py $(WIRE_SCENARIO) $(WIRE_STRATEGY) out/wire.bin
	cargo bench -p kassign-core --bench wire -- out/wire.bin $(WIRE_STRATEGY)

# Side-by-side runs vs kafka-python, aiokafka, Java (kafka-clients) and franz-go (benches/run_all.py).
# bench-smoke: tiny sizes, about a minute (also run by `make test` via benches/test_bench_smoke.py).
# bench-full: the whole report in one run (the grid of docs/benchmark-shapes.md, then benches/drop_in.py and
# benches/broker_plugin.py, which needs the broker plugin's jar); regenerates BENCHMARKS.md and
# benches/np_series.png. `benches/run_all.py --estimate` prints its cells and expected duration.
# Extra run_all.py flags go in ARGS, e.g. `make bench-full ARGS=--resume` (keep cached cells).
bench-smoke: develop
	$(PY) benches/run_all.py --smoke $(ARGS)

bench-full: develop broker-plugin
	nice -n 10 $(PY) benches/run_all.py $(ARGS)

# Rebalance time of a 30-member group on the real broker (tests/support/broker/rebalance_bench.py): kassign's
# assignors vs kafka-python's built-in sticky. Not part of `make test` (a few minutes on 2 cores).
bench-rebalance: develop
	mkdir -p out
	$(PY) tests/support/broker/rebalance_bench.py --members 30 --trials 5 --json out/rebalance.json

# Wall time of `kassign snapshot` on a local broker holding SNAPSHOT_GROUPS live consumer groups
# (tests/support/broker/snapshot_bench.py; docs/fleet.md). Not part of `make test`.
SNAPSHOT_GROUPS ?= 2000
bench-snapshot: develop
	mkdir -p out
	uptime
	$(PY) tests/support/broker/snapshot_bench.py --groups $(SNAPSHOT_GROUPS) --trials 3 --json out/snapshot-bench.json

clean:
	rm -rf $(VENV) target dist site

# abi3 wheels for CPython >= 3.10 and an sdist, into dist/ (docs/platforms.md):
# - manylinux2014 (glibc >= 2.17) x86_64 and aarch64: zig (the ziglang package) links against glibc
#   2.17 symbols, so no manylinux container is needed;
# - win_amd64: Rust's x86_64-pc-windows-gnu target linked by Debian's MinGW-w64 GCC; maturin writes
#   the import library of python3.dll (the stable ABI's DLL) for an abi3 build, so no Windows Python
#   is needed.
# - cp314t (only when DIST_PLATFORMS names it; `make test-ft`): manylinux2014 x86_64 for free-threaded
#   CPython 3.14 (version-specific: abi3 does not exist for free-threaded 3.14), built against the
#   --disable-gil CPython of scripts/ft-python, which needs CPython's source (docs/platforms.md).
# DIST_PLATFORMS chooses the wheels (e.g. `make dist DIST_PLATFORMS=x86_64`). Each target has its own
# cargo target directory, so no build invalidates another's (or `make develop`'s).
DIST_PLATFORMS ?= x86_64 aarch64 win_amd64
DIST_TARGET_DIR ?= target/dist
DIST_AARCH64_TARGET_DIR ?= target/dist-aarch64
DIST_WINDOWS_TARGET_DIR ?= target/dist-windows
DIST_MATURIN := PATH="$(abspath $(VENV))/bin:$$PATH" $(abspath $(VENV))/bin/maturin build --release --out dist --quiet
DIST_RUST_TARGETS := $(if $(filter aarch64,$(DIST_PLATFORMS)),aarch64-unknown-linux-gnu) \
	$(if $(filter win_amd64,$(DIST_PLATFORMS)),x86_64-pc-windows-gnu)
dist: $(VENV)/.tools
	rm -rf dist
	@$(call ensure-rust-targets,$(DIST_RUST_TARGETS),make dist DIST_PLATFORMS=x86_64)
	$(if $(filter x86_64,$(DIST_PLATFORMS)),CARGO_TARGET_DIR=$(DIST_TARGET_DIR) \
		$(DIST_MATURIN) --compatibility manylinux2014 --zig)
	$(if $(filter aarch64,$(DIST_PLATFORMS)),CARGO_TARGET_DIR=$(DIST_AARCH64_TARGET_DIR) \
		$(DIST_MATURIN) --compatibility manylinux2014 --zig --target aarch64-unknown-linux-gnu)
	$(if $(filter win_amd64,$(DIST_PLATFORMS)),CARGO_TARGET_DIR=$(DIST_WINDOWS_TARGET_DIR) \
		$(DIST_MATURIN) --target x86_64-pc-windows-gnu)
	$(if $(filter cp314t,$(DIST_PLATFORMS)),ftpy="$$(scripts/ft-python 3.14)" && CARGO_TARGET_DIR=$(DIST_FT_TARGET_DIR) \
		$(DIST_MATURIN) --compatibility manylinux2014 --zig --interpreter "$$ftpy")
	$(VENV)/bin/maturin sdist --out dist
	ls -l dist

# The broker-side assignor (java/broker/, docs/broker.md) -> dist/kassign-broker-<version>.jar, the
# version being Cargo.toml's (the wheel's). Its JNI library (the kassign-jni crate, rust/jni/) is
# built for each Rust target in BROKER_TARGETS, linked by zig against glibc 2.17 symbols as the wheel
# is, and bundled in the jar as kassign/broker/native/linux-<arch>/libkassign.so (the directory
# NativeLibrary.platform() derives from os.name/os.arch). Maven runs the module's tests
# (java/broker/src/test) against the bundled library on the way; tests/broker/test_broker_jar.py
# checks every bundled library's machine and glibc floor.
KASSIGN_VERSION := $(shell sed -n 's/^version = "\([^"]*\)"/\1/p' Cargo.toml | head -n 1)
BROKER_TARGETS ?= x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu
BROKER_TARGET_DIR ?= target/broker
BROKER_NATIVE_DIR := target/broker-native
BROKER_JAR := dist/kassign-broker-$(KASSIGN_VERSION).jar
broker-plugin: $(VENV)/.tools broker-rust-targets
	rm -rf $(BROKER_NATIVE_DIR)
	for t in $(BROKER_TARGETS); do \
		PATH="$(abspath $(VENV))/bin:$$PATH" CARGO_TARGET_DIR=$(BROKER_TARGET_DIR) \
			$(VENV)/bin/cargo-zigbuild zigbuild --release --quiet -p kassign-jni --lib \
			--target $$t.2.17 || exit 1; \
		dir=$(BROKER_NATIVE_DIR)/kassign/broker/native/linux-$${t%%-*}; \
		mkdir -p $$dir && cp $(BROKER_TARGET_DIR)/$$t/release/libkassign.so $$dir/libkassign.so || exit 1; \
	done
	mvn -q -B -f java/broker/pom.xml -Drevision=$(KASSIGN_VERSION) \
		-Dkassign.native.dir=$(abspath $(BROKER_NATIVE_DIR)) package
	mkdir -p dist
	cp java/broker/target/kassign-broker-$(KASSIGN_VERSION).jar $(BROKER_JAR)
	ls -l $(BROKER_JAR)

# The Rust standard library for every target in BROKER_TARGETS (part of the build's tool set-up, so a
# fresh clone builds the jar).
broker-rust-targets:
	@$(call ensure-rust-targets,$(BROKER_TARGETS),make broker-plugin BROKER_TARGETS=x86_64-unknown-linux-gnu)

# $(call ensure-rust-targets,TARGETS,FALLBACK): for each Rust target in TARGETS, nothing to do when its
# standard library is installed, else `rustup target add`; on failure the message names FALLBACK (a
# build without the missing targets).
define ensure-rust-targets
sysroot=$$(rustc --print sysroot) || exit 1; \
for t in $(1); do \
	[ -d "$$sysroot/lib/rustlib/$$t/lib" ] && continue; \
	if ! command -v rustup >/dev/null 2>&1; then \
		echo "the Rust standard library for $$t is not installed and rustup is not on PATH" \
			"(install it with rustup, https://rustup.rs, or build without it: $(2))" >&2; \
		exit 1; \
	fi; \
	echo "rustup target add $$t"; \
	rustup target add "$$t" || { \
		echo "\`rustup target add $$t\` failed (it downloads the target's standard library:" \
			"check the network or proxy, or build without it: $(2))" >&2; \
		exit 1; }; \
done
endef

# Install the x86_64 wheel into a clean venv with no cargo on PATH and run scripts/dist_smoke.py; then
# the win_amd64 wheel under wine (scripts/foreign-wheel): the smoke test, broker-free unit tests and
# the seeded groups' digests against x86_64's. (The aarch64 wheel's run is `make test`'s
# test-aarch64, which uses the wheels this leaves in dist/.)
dist-smoke: dist
	AUDITWHEEL=$(VENV)/bin/auditwheel PYTHON=$(PYTHON) DIST_PLATFORMS="$(DIST_PLATFORMS)" scripts/dist-smoke

# Lints and type checks. `ruff format --check` expects `make fmt` to have been run.
lint: lint-python lint-rust

lint-python: $(VENV)/.tools develop
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest kassign._core --allowlist stubtest-allowlist.txt

lint-rust:
	cargo fmt --all --check
	cargo clippy --quiet --workspace --all-targets -- -D warnings

# Rewrite formatting in place: ruff's safe fixes (imports, py310 syntax), ruff format, cargo fmt.
fmt: $(VENV)/.tools
	scripts/format-all

# The documentation site (mkdocs-material + mkdocstrings) into site/; warnings are errors (no --quiet:
# with mkdocs 1.6, --quiet hides warnings from --strict).
docs: $(VENV)/.tools
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve: $(VENV)/.tools
	$(VENV)/bin/mkdocs serve

# The fleet report pictures in docs/images/ come from `make demo`'s report (scripts/docs-images).
docs-images: demo
	scripts/docs-images $(DEMO_OUT)

# Fuzz every wire decoder (rust/core/src/protocol.rs) with libFuzzer: no panic, bounded allocation,
# re-encoding round trips; then the leader path (rust/core/src/wire.rs): every member answered, valid
# assignments. Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
FUZZ_RUNS ?= 1000000
.PHONY: fuzz
fuzz:
	mkdir -p fuzz/corpus/decoders
	cargo +nightly fuzz run decoders $(CURDIR)/fuzz/corpus/decoders $(CURDIR)/fuzz/seeds -- \
		-runs=$(FUZZ_RUNS) -max_len=1024 -print_final_stats=1
	mkdir -p fuzz/corpus/wire
	cargo +nightly fuzz run wire $(CURDIR)/fuzz/corpus/wire $(CURDIR)/fuzz/seeds -- \
		-runs=$(FUZZ_RUNS) -max_len=2048 -print_final_stats=1
