# Two commands set everything up on a fresh machine with python3 (>= 3.11):
#   make generate   spec/ -> generated/ and tests/generated/
#   make test       freshness check, static checks and every test, side by side; the
#                   tests spread over the cores (pytest-xdist), the slowest 15 listed
#   make bench      benchmarks: ratios and growth, never asserted wall times; draws bench/*.svg
#                   (the gateway's against LiteLLM's proxy, installed in .bench-venv/)
#   make fuzz       the property tests and the mutation fuzzer, with many more inputs
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum < requirements.lock | cut -d' ' -f1)
# LiteLLM's proxy, which bench/gateway.py measures ours against: its own venv, never .venv.
BENCH_VENV := .bench-venv
BENCH_STAMP := $(BENCH_VENV)/.installed-$(shell cksum < bench/litellm.lock | cut -d' ' -f1)
# The JavaScript clients the tests read streams with (Node and npm are on every machine).
CLIENTS := tests/clients/node_modules/.installed-$(shell cksum < tests/clients/package-lock.json | cut -d' ' -f1)

.PHONY: generate check lint pytest test bench fuzz clean

$(STAMP): requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit("chunkspec needs Python >= 3.11, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.lock
	touch $@

$(BENCH_STAMP): bench/litellm.lock
	rm -rf $(BENCH_VENV)
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r bench/litellm.lock
	touch $@

$(CLIENTS): tests/clients/package-lock.json
	cd tests/clients && npm ci --no-audit --no-fund --loglevel=error
	touch $@

generate: $(STAMP)
	$(PY) -m generator generate

check: $(STAMP)
	$(PY) -m generator check

lint: $(STAMP)
	$(PY) -m ruff check generator generated tests bench examples setup.py
	$(PY) -m black --check --quiet generator bench tests examples setup.py
	$(PY) -m black --check --line-length=88 generated tests/generated/*.py generator/runtime/*.py generator/runtime/*/*.py
	$(PY) -m ruff check --isolated --extend-select E4,E7,E9,F,E501 --line-length 88 generated generator/runtime
	$(PY) -m mypy
	$(PY) -m pyright

# The static checks run beside pytest (they take a core for half a minute); make test
# fails if any of the three fails, and prints its wall time.
test: $(STAMP)
	@start=$$(date +%s); status=0; \
	$(MAKE) --no-print-directory -j3 check lint pytest || status=$$?; \
	echo "make test: $$([ $$status = 0 ] && echo passed || echo FAILED) in $$(($$(date +%s) - start)) s"; \
	exit $$status

pytest: $(STAMP) $(CLIENTS)
	$(PY) -m pytest -n auto --dist loadfile --no-loadscope-reorder --durations=15

fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz CHUNKSPEC_FUZZ_INPUTS=200000 CHUNKSPEC_FUZZ_SEED=random $(PY) -m pytest \
		tests/generated/test_properties.py tests/runtime/chat/test_openai_differential.py tests/runtime/chat/test_fuzz.py \
		tests/runtime/test_ledger.py

.PHONY: golden
golden: $(STAMP)
	$(PY) -m tests.helpers.golden

bench: $(STAMP) $(BENCH_STAMP)
	$(PY) -m bench.throughput
	$(PY) -m bench.accumulation
	$(PY) -m bench.meanings
	$(PY) -m bench.frames
	$(PY) -m bench.streams
	$(PY) -m bench.protocols
	$(PY) -m bench.gateway
	$(PY) -m bench.state
	$(PY) -m bench.charts

clean:
	rm -rf $(VENV) $(BENCH_VENV) .mypy_cache .ruff_cache .pytest_cache
