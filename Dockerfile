# The Action's image: the project's source on top of the prebuilt dependency base
# (docker/base.Dockerfile). This build needs no network, so a runner builds `uses: ./`
# in seconds and act can build it with the engine's default (no) network.
# CI tags its locally built base with exactly this default name.
ARG BASE=ghcr.io/org/retrieval-eval-base:1.0.0
FROM ${BASE}

COPY pyproject.toml README.md /tmp/retrieval-eval/
COPY src /tmp/retrieval-eval/src
RUN pip install --no-cache-dir --no-deps --no-index --no-build-isolation /tmp/retrieval-eval \
 && rm -rf /tmp/retrieval-eval \
 && retrieval-eval --version

ENTRYPOINT ["retrieval-eval", "action"]
