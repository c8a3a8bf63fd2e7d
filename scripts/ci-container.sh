#!/usr/bin/env bash
# Builds the Action's container and runs it for real, as GitHub's runner does, on a
# fresh Debian machine with no image registry: installs Debian's Docker engine, starts a
# private dockerd (its own socket and data root, so every run is cold and nothing else is
# touched) and Debian's docker-registry on 127.0.0.1, debootstraps the Python base (pushed
# to that registry, so it is named by digest as a release requires), builds the dependency
# base and the thin image from the same Dockerfiles a release builds, then runs the container tests (tests/container,
# marker `container`): the runner-style container run, the act workflow, the release script
# against the local registry and a consumer workflow that pulls the released image, all
# against the fake GitHub API; hadolint, actionlint.
# Prints `N passed, N failed` and exits non-zero on any failure. Called by .ci/run after
# `make test` (which creates .venv). Arguments, if any, name the tests to run instead of all
# of tests/container (e.g. `scripts/ci-container.sh tests/container/test_boundary.py`).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
started=$SECONDS

python=${PYTHON:-$repo/.venv/bin/python}
tests=("$@")
((${#tests[@]})) || tests=(tests/container)
if [[ ! -x "$python" ]]; then
  echo "ci-container: $python is missing; run \`make test\` first (it creates .venv)" >&2
  exit 2
fi

base_tag=$(sed -n 's/^ARG BASE=//p' Dockerfile)
image_tag=retrieval-eval:ci
python_tag=retrieval-eval-ci/debian-python:bookworm
act_runner_tag=retrieval-eval-ci/act-runner:bookworm
# Short: dockerd's sockets live under it and unix socket paths are limited to 108 bytes.
work=$(mktemp -d /tmp/re-ci.XXXXXX)
dockerd_pid=""
registry_pid=""

timings=()
mark() { # mark NAME START: records how long a phase took
  local took=$((SECONDS - $2))
  timings+=("$1: ${took} s")
  echo "ci-container: $1 took ${took} s"
}

stop_dockerd() {
  if [[ -n "$dockerd_pid" ]] && kill -0 "$dockerd_pid" 2>/dev/null; then
    kill -TERM "$dockerd_pid"
    wait "$dockerd_pid" || true
  fi
  dockerd_pid=""
}

stop_registry() {
  if [[ -n "$registry_pid" ]] && kill -0 "$registry_pid" 2>/dev/null; then
    kill -TERM "$registry_pid"
    wait "$registry_pid" || true
  fi
  registry_pid=""
}

cleanup() {
  local status=$?
  stop_registry
  stop_dockerd
  # dockerd unmounts its overlays on shutdown but leaves the bind mount of the host's
  # network namespace (exec-root/netns/default); unmount whatever is left, deepest first.
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r | while read -r mount; do
    umount "$mount" || umount -l "$mount" || true
  done
  rm -rf "$work" || echo "ci-container: could not remove $work" >&2
  exit "$status"
}
trap cleanup EXIT

# --- tools -----------------------------------------------------------------------------
t=$SECONDS
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v docker-registry >/dev/null || missing+=(docker-registry)
if ((${#missing[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Neither apt-get update nor the indextargets the rootfs build reads exist on a machine
# whose lists were never fetched.
[[ -n "$(apt-get indextargets 2>/dev/null | head -n 1)" ]] || apt-get update -qq
"$python" -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet --require-hashes --no-deps -r docker/ci-tools.lock
npm ci --silent --no-fund --no-audit
export PATH="$work/tools/bin:$PATH"
mark "install tools" "$t"

# --- a private Docker engine -------------------------------------------------------------
t=$SECONDS
export DOCKER_HOST="unix://$work/docker.sock"
export DOCKER_BUILDKIT=0 # Debian's engine has only the classic builder
storage=overlay2
echo "ci-container: starting dockerd (storage $storage, no bridge, no iptables)"
dockerd --host "$DOCKER_HOST" --data-root "$work/data" --exec-root "$work/exec" \
  --pidfile "$work/dockerd.pid" --storage-driver "$storage" \
  --bridge=none --iptables=false --ip6tables=false >"$work/dockerd.log" 2>&1 &
dockerd_pid=$!
# Ready when it says so in its log (or gone when it dies): no polling loop.
if ! timeout 60 grep -q -m 1 -e 'API listen on' <(tail -n +1 -F "$work/dockerd.log" --pid "$dockerd_pid"); then
  echo "ci-container: dockerd did not start:" >&2
  tail -n 30 "$work/dockerd.log" >&2
  exit 2
fi
docker info --format 'ci-container: dockerd {{.ServerVersion}}, storage {{.Driver}}'
mark "start dockerd" "$t"

# --- a private image registry (the reference registry, Debian's docker-registry) ----------
# The release test pushes the images here and a consumer workflow pulls them back. dockerd
# treats registries on 127.0.0.0/8 as insecure (plain HTTP) by default.
t=$SECONDS
registry_port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
registry_address="127.0.0.1:$registry_port"
printf 'version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
  "$work/registry" "$registry_address" >"$work/registry.yml"
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
if ! timeout 30 grep -q -m 1 -e "listening on $registry_address" <(tail -n +1 -F "$work/registry.log" --pid "$registry_pid"); then
  echo "ci-container: docker-registry did not start:" >&2
  tail -n 30 "$work/registry.log" >&2
  exit 2
fi
echo "ci-container: docker-registry listening on $registry_address"
mark "start registry" "$t"

# --- images --------------------------------------------------------------------------------
t=$SECONDS
bash docker/build-rootfs.sh "$python_tag" "$work/rootfs"
mark "debootstrap + docker import" "$t"

# A release builds the base only from a Python image named by digest (release.sh refuses
# a tag alone). The stand-in gets its digest the way python:3.11-slim-bookworm has one, by
# being pushed to a registry; the base is then built from that pin, here as in a release.
python_ref=$registry_address/library/python:3.11-slim-bookworm
docker tag "$python_tag" "$python_ref"
docker push --quiet "$python_ref" >/dev/null
python_digest=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$python_ref" |
  grep -m 1 "^$registry_address/library/python@sha256:")
python_pin=$python_ref@${python_digest#*@}
echo "ci-container: the Python base is $python_pin"

t=$SECONDS
# The job image of the sharded workflow's act test: JavaScript actions need node in it.
docker build --quiet --network=host -f docker/act-runner.Dockerfile \
  --build-arg RUNNER_IMAGE="$python_tag" -t "$act_runner_tag" . >"$work/act-runner-build.log" 2>&1 || {
  tail -n 60 "$work/act-runner-build.log" >&2
  exit 2
}
mark "act runner image build" "$t"

t=$SECONDS
docker build --quiet --network=host -f docker/base.Dockerfile \
  --build-arg PYTHON_IMAGE="$python_pin" -t "$base_tag" . >"$work/base-build.log" 2>&1 || {
  tail -n 60 "$work/base-build.log" >&2
  exit 2
}
mark "base image build" "$t"

t=$SECONDS
# No network at all: the thin image must build the way act builds `uses: ./`.
docker build --quiet --network=none -t "$image_tag" . >"$work/image-build.log" 2>&1 || {
  tail -n 60 "$work/image-build.log" >&2
  exit 2
}
mark "image build" "$t"
size=$(docker image inspect --format '{{.Size}}' "$image_tag")
timings+=("image size: $((size / 1000000)) MB")

# --- tests ----------------------------------------------------------------------------------
t=$SECONDS
junit="$work/container-junit.xml"
set +e
RETRIEVAL_EVAL_IMAGE="$image_tag" RETRIEVAL_EVAL_RUNNER_IMAGE="$python_tag" \
  RETRIEVAL_EVAL_PYTHON_IMAGE="$python_pin" \
  RETRIEVAL_EVAL_ACT_RUNNER_IMAGE="$act_runner_tag" \
  RETRIEVAL_EVAL_REGISTRY="$registry_address" RETRIEVAL_EVAL_REGISTRY_LOG="$work/registry.log" \
  RETRIEVAL_EVAL_TIMINGS="$work/test-timings.txt" \
  "$repo/.venv/bin/pytest" -m container -p no:xdist -p no:cacheprovider -q \
  --junitxml="$junit" "${tests[@]}"
pytest_status=$?
set -e
mark "container tests" "$t"

stop_registry
stop_dockerd
if [[ -f "$work/test-timings.txt" ]]; then
  while IFS= read -r line; do timings+=("$line"); done <"$work/test-timings.txt"
fi
timings+=("total: $((SECONDS - started)) s")
printf 'ci-container: %s\n' "${timings[@]}"

# The closing line CI reads: counts from the JUnit report, so a crash that collected no
# test shows up as a failure rather than as an empty success.
read -r passed failed < <("$python" - "$junit" <<'EOF'
import sys
import xml.etree.ElementTree as ET

try:
    suite = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0, 1)
    raise SystemExit
suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
total, failed = int(suite.get("tests", 0)), int(suite.get("failures", 0)) + int(suite.get("errors", 0))
skipped = int(suite.get("skipped", 0))
print(total - failed - skipped, failed)
EOF
)
echo "container: $passed passed, $failed failed"
if ((pytest_status != 0 || failed != 0 || passed == 0)); then
  exit 1
fi
