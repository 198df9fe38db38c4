# make test: everything CI runs, from a machine with only Go, Python 3.11 and gcc.
# make demo: build, install into .venv, and compare HNSW with exact search.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# staticcheck 2026.2.2, the first line of releases that understands Go 1.26.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Real embeddings for the demo, if a copy of the shared data sits beside the repo.
STRATA_DATA ?= $(firstword $(wildcard ../shared/data/pypi-use512))

.PHONY: test demo install go-check go-test py-lint py-test clean

test: go-check go-test install py-lint py-test

$(PY):
	$(PYTHON) -m venv $(VENV)

# Always reinstall: pip rebuilds the Go library and the cffi module from the tree.
install: $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check '.[test]'

go-check:
	@unformatted=$$(gofmt -l go capi); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	go vet -tags noasm ./...
	go run $(STATICCHECK) ./...

go-test:
	go test -race ./go/... ./capi/...
	go test -tags noasm ./go/...

py-lint: install
	$(VENV)/bin/ruff check strata python tests bench setup.py

# Run from tests/ so that the source tree's strata/ cannot shadow the
# installed package (tests/test_install.py checks which one is imported).
py-test: install
	cd tests && ../$(PY) -m pytest -q

# -P keeps the source tree's strata/ (no built engine) off sys.path.
demo: install
	STRATA_DATA="$(STRATA_DATA)" $(PY) -P -m strata.demo

clean:
	rm -rf $(VENV) build dist *.egg-info strata/_ffi.py
