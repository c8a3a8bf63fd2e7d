# The Action's image: the project's source on top of the prebuilt dependency base
# (docker/base.Dockerfile). This build needs no network, so a runner builds `uses: ./`
# in seconds and act can build it with the engine's default (no) network.
# The base is named by a hash of the files it is built from (requirements/runtime.lock,
# requirements/model.lock, docker/unused.txt, docker/trim-venv.sh, docker/base.Dockerfile),
# not by the version, so a release bump edits pyproject.toml only; tests/container/test_release_files.py says
# the line to write when those files change. scripts/release.sh publishes that base unless
# the registry has it. CI tags its locally built base with exactly this default name.
ARG BASE=ghcr.io/org/retrieval-eval-base:deps-561b6bd813b6

# The build stage installs the source into a separate root (`--root`), so the project's
# source and pip's build folders stay in that stage; the image gets only what pip installed,
# in one layer, with hash-checked .pyc files and file times of SOURCE_DATE_EPOCH (default 0):
# two builds of the same commit give the same layer. The base has no pip: this stage takes
# it from the Python image's ensurepip and installs setuptools and wheel from the wheels the
# base keeps in /opt/retrieval-eval/wheels (hash-checked from the lock), so neither pip nor
# the build tools reach the image.
#
# The same layer adds the user the pull request's code runs as (src/retrieval_eval/trust/
# boundary.py: CHILD_USER, CHILD_UID): a system user and group of its own, no home, no
# shell, no password, in no other group, owning no file of the image. /etc/passwd and
# /etc/group are the base's with one line each (written here, not by useradd, which also
# stamps today's date into /etc/shadow). /etc/retrieval-eval/boundary marks the image:
# where it exists and the user does not, no pull request code runs at all.
FROM ${BASE} AS build
COPY pyproject.toml README.md /tmp/retrieval-eval/
COPY src /tmp/retrieval-eval/src
RUN python3 -m ensurepip >/dev/null \
 && python3 -m pip install --no-cache-dir --no-compile --no-deps --no-index /opt/retrieval-eval/wheels/*.whl \
 && python3 -m pip install --no-cache-dir --no-compile --no-deps --no-index --no-build-isolation \
      --root /tmp/installed /tmp/retrieval-eval \
 && python3 -m compileall -q --invalidation-mode unchecked-hash \
      -s /tmp/installed -p / /tmp/installed"${VIRTUAL_ENV}" >/dev/null \
 && mkdir -p /tmp/installed/etc/retrieval-eval \
 && cp /etc/passwd /etc/group /tmp/installed/etc/ \
 && echo 'retrieval-eval-pr:x:64101:64101:pull request code:/nonexistent:/usr/sbin/nologin' \
      >>/tmp/installed/etc/passwd \
 && echo 'retrieval-eval-pr:x:64101:' >>/tmp/installed/etc/group \
 && echo 'pull request code runs as retrieval-eval-pr, or not at all' \
      >/tmp/installed/etc/retrieval-eval/boundary \
 && find /tmp/installed -exec touch --no-dereference --date="@${SOURCE_DATE_EPOCH:-0}" {} + \
 && cp -a /tmp/installed/. / \
 && retrieval-eval --version

FROM ${BASE}
COPY --from=build /tmp/installed/ /

ENTRYPOINT ["retrieval-eval", "action"]
