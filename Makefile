# talkie: `make demo` opens the demo, `make test` runs the whole suite on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: setup system-deps demo test test-fast fuzz lint bench screenshots clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# The authorization server of the sign-in tests (npm oidc-provider, pinned by the lockfile).
OAUTH_SERVER := tests/oauth_server
OAUTH_STAMP  := $(OAUTH_SERVER)/node_modules/.installed-stamp

$(OAUTH_STAMP): $(OAUTH_SERVER)/package-lock.json
	npm ci --prefix $(OAUTH_SERVER) --no-audit --no-fund
	touch $(OAUTH_STAMP)

system-deps:
	bash scripts/install-system-deps.sh

demo: setup
	$(BIN)/talkie demo

lint: setup
	$(BIN)/ruff check talkie_tui tests benchmarks scripts
	$(BIN)/ruff format --check talkie_tui tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/lint-imports

# Coverage is measured where it is a target (protocol/, chat/ and auth/, at least 90 %); the
# rest of the suite runs without the tracer, which slows the Textual tests several times over.
# tests/bridge and tests/backends are here for the wire they drive against the reference servers
# (the hub's agent client, contacts, schedules: protocol/cuckoo/).
CORE_TESTS := tests/protocol tests/chat tests/integration tests/auth tests/oauth tests/test_network.py tests/bridge tests/backends
COVERED    := --cov=talkie_tui.protocol --cov=talkie_tui.chat --cov=talkie_tui.auth

test: system-deps setup lint $(OAUTH_STAMP)
	$(BIN)/pytest -q $(COVERED) --cov-report= $(CORE_TESTS)
	$(BIN)/coverage report --fail-under=90
	$(BIN)/pytest $(foreach d,$(CORE_TESTS),--ignore=$(d)) -m "not voice" $(PYTEST_ARGS)
	@# Real-time calls (WebRTC, audio clocks) in a fresh process: after a thousand other tests
	@# a long-lived process stalls its event loop (garbage collection of a large heap, leftover
	@# threads) long enough to drop audio.
	$(BIN)/pytest $(foreach d,$(CORE_TESTS),--ignore=$(d)) -m voice $(PYTEST_ARGS)

test-fast: setup $(OAUTH_STAMP)
	$(BIN)/pytest -x -q $(PYTEST_ARGS)

# The hostile-input suite of the reference servers, exploring: HOSTILE_EXAMPLES new examples per
# property (`make test` runs a few, the same every time). FUZZ_EXAMPLES=N to change the count.
FUZZ_EXAMPLES ?= 2000

fuzz: setup
	HOSTILE_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -p no:cacheprovider -q tests/devserver/hostile

bench: setup
	$(BIN)/python benchmarks/stream_core.py
	$(BIN)/python benchmarks/minara_stream.py
	$(BIN)/python benchmarks/open_thread.py
	$(BIN)/python benchmarks/render_stream.py
	$(BIN)/python benchmarks/terminal_stream.py --protocols talkie minara cuckoo
	$(BIN)/python benchmarks/voice_call.py
	$(BIN)/python benchmarks/bridge_latency.py
	$(BIN)/python benchmarks/cuckoo_hub.py
	$(BIN)/python benchmarks/soak.py
	$(BIN)/python benchmarks/text_cost.py
	$(BIN)/python benchmarks/startup.py

screenshots: setup
	bash scripts/install-system-deps.sh screenshots
	$(BIN)/python scripts/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .coverage
