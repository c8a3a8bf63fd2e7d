# The Action's image: the project's source on top of the prebuilt dependency base
# (docker/base.Dockerfile). This build needs no network, so a runner builds `uses: ./`
# in seconds and act can build it with the engine's default (no) network.
# The base is named by a hash of the files it is built from (requirements/runtime.lock,
# requirements/model.lock, docker/unused.txt, docker/base.Dockerfile), not by the version,
# so a release bump edits pyproject.toml only; tests/container/test_release_files.py says
# the line to write when those files change. scripts/release.sh publishes that base unless
# the registry has it. CI tags its locally built base with exactly this default name.
ARG BASE=ghcr.io/org/retrieval-eval-base:deps-1f1f3a9dfdf4
FROM ${BASE}

COPY pyproject.toml README.md /tmp/retrieval-eval/
COPY src /tmp/retrieval-eval/src
RUN pip install --no-cache-dir --no-deps --no-index --no-build-isolation /tmp/retrieval-eval \
 && rm -rf /tmp/retrieval-eval \
 && retrieval-eval --version

ENTRYPOINT ["retrieval-eval", "action"]
