# Two entry points on a fresh machine (README "Quick start"):
#   make demo   create .venv, install dpverify, run the main job and re-verify its output
#   make test   create .venv, install dpverify with test extras, lint (ruff, mypy),
#               run the tests (the
#               property tests write the certificates of what they checked) and
#               re-verify those and every committed certificate independently
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
OUT    ?= build/certificates
# pytest worker processes (pytest-xdist): the suite is CPU-bound and single-threaded, so one
# worker per core of the 2-core CI machine halves its wall time; a file's tests stay on one
# worker (--dist loadfile), so a module's fixtures are computed once
TEST_WORKERS ?= 2

.PHONY: demo test lint venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

venv: $(BIN)/python

demo: venv
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/dpverify reproduce --out $(OUT)
	$(BIN)/dpverify verify --quiet $(OUT)
	@echo "all certificates in $(OUT) re-verified independently"

# ruff on the package, its tests and scripts; mypy strict on the files listed in pyproject.toml [tool.mypy]
lint:
	$(BIN)/python -m ruff check dpverify tests scripts
	$(BIN)/python -m mypy

test: venv
	$(BIN)/python -m pip install --quiet -e '.[test,opacus]' torch==2.13.0
	$(MAKE) lint
	rm -rf build/property-certificates
	# the tests start many `dpverify` children; where PYTHONDONTWRITEBYTECODE is set (as on this
	# CI machine) each would compile the package's modules again, about 0.4 CPU s a child
	$(BIN)/python -m compileall -q dpverify
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} DPVERIFY_CERT_DIR=build/property-certificates \
		$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile
	$(BIN)/dpverify verify --quiet certificates docs/reports/oracle-battery.json build/property-certificates
	$(BIN)/dpverify verify --quiet tests/certificate/format1 tests/certificate/format2

clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis
