#!/usr/bin/env bash
# Publishes a release: builds the Action's image for a version tag (and the dependency base
# it builds on, unless the registry already has that base), pushes them, commits the released
# action.yml (`image: docker://…:<version>@sha256:…`, so users' runners pull exactly the
# pushed image instead of building one) on top of the tagged commit, and points the version
# tag and the major tag at that release commit.
#
#   scripts/release.sh vX.Y.Z
#
# Run from a checkout of the tag (.github/workflows/release.yml does, on every `v*.*.*`
# tag; CI runs it against a local registry). Settings, from the environment:
#
#   GITHUB_REPOSITORY      owner/name of the repository the release runs in (set by the
#                          runner); its owner, lower-cased, is the image namespace
#   RELEASE_REGISTRY       registry host[:port] (default ghcr.io)
#   RELEASE_REMOTE         git remote the tags are pushed to (default origin)
#   RELEASE_BUILD_NETWORK  network of the base build, which reaches PyPI (default host)
#   PYTHON_IMAGE           Python image the base starts from, named by digest
#                          (`<name>:<tag>@sha256:<digest>`; default: base.Dockerfile's)
#
# Nothing is pushed unless every check passes: the tag and pyproject.toml's version agree,
# the owner the Dockerfile and the workflows name is the repository's, the Dockerfile names
# the base of the current dependency files, main's action.yml builds the Dockerfile, the
# Python base is named by digest, the registry has no image of this version yet (a tag is
# never pushed twice), and the built image reports the version.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "release: $*" >&2
  exit 1
}

tag=${1:-}
[[ "$tag" =~ ^v([0-9]+)\.[0-9]+\.[0-9]+$ ]] || fail "usage: release.sh vX.Y.Z (got '${tag}')"
version=${tag#v}
major=v${BASH_REMATCH[1]}
repository=${GITHUB_REPOSITORY:-}
[[ "$repository" == */* ]] ||
  fail "set GITHUB_REPOSITORY to the owner/name of the repository being released (got '$repository')"
owner=${repository%%/*}
owner=${owner,,} # registries accept lower-case repository names only
image_registry=${RELEASE_REGISTRY:-ghcr.io}
remote=${RELEASE_REMOTE:-origin}
network=${RELEASE_BUILD_NETWORK:-host}
# The base is named by what it is built from, not by the version: a release that changes
# no dependency reuses the published base, and a version bump edits pyproject.toml only.
base_inputs=(requirements/runtime.lock requirements/model.lock docker/unused.txt docker/trim-venv.sh
  docker/base.Dockerfile)
base_tag=deps-$(cat "${base_inputs[@]}" | sha256sum | cut -c1-12)
base_ref=$image_registry/$owner/retrieval-eval-base:$base_tag
image_ref=$image_registry/$owner/retrieval-eval:$version

# --- checks: the tag, the version and the files agree -----------------------------------
source_commit=$(git rev-parse --verify --quiet "refs/tags/$tag^{commit}") ||
  fail "no tag $tag in this repository"
[[ "$(git rev-parse HEAD)" == "$source_commit" ]] ||
  fail "HEAD is not $tag; check out the tag first"
[[ -z "$(git status --porcelain --untracked-files=no)" ]] ||
  fail "the working tree has uncommitted changes; release from a clean checkout of $tag"
project_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)
[[ "$project_version" == "$version" ]] ||
  fail "$tag does not match pyproject.toml's version $project_version; bump the version, then tag"
# The owner is written in the Dockerfile's base and in the workflows' `uses:`; a release
# from a fork or a transferred repository must not publish images that those still miss.
dockerfile_base=$(sed -n 's/^ARG BASE=//p' Dockerfile)
[[ "$dockerfile_base" =~ ^[^/]+/([^/]+)/retrieval-eval-base:(.+)$ ]] ||
  fail "Dockerfile: ARG BASE=$dockerfile_base is not <registry>/<owner>/retrieval-eval-base:<tag>"
[[ "${BASH_REMATCH[1],,}" == "$owner" ]] ||
  fail "Dockerfile: ARG BASE names the owner ${BASH_REMATCH[1]}, but this release runs in $repository; write $owner there"
[[ "${BASH_REMATCH[2]}" == "$base_tag" ]] ||
  fail "Dockerfile: ARG BASE names the base ${BASH_REMATCH[2]}, but the dependency files make $base_tag; write $base_tag there"
# The workflows' `uses:` and the workflows `retrieval-eval init` writes for users.
named_in=(.github/workflows/*.yml src/retrieval_eval/author/scaffold.py)
while IFS=: read -r file line named; do
  named=${named%%/*}
  [[ "${named,,}" == "$owner" ]] ||
    fail "$file:$line: names the owner $named, but this release runs in $repository; write $owner there"
done < <(grep -H -n -o -E '[A-Za-z0-9_.-]+/retrieval-eval@v[0-9]' "${named_in[@]}" 2>/dev/null || true)
# The Python image the base starts from must be named by digest: a tag like
# python:3.11-slim-bookworm moves with every Debian and CPython patch release, so the same
# base name would hold different bytes. The pin is recorded in the image's labels.
python_image=${PYTHON_IMAGE:-$(sed -n 's/^ARG PYTHON_IMAGE=//p' docker/base.Dockerfile)}
[[ "$python_image" =~ @sha256:[0-9a-f]{64}$ ]] ||
  fail "docker/base.Dockerfile: the Python base '$python_image' is not pinned by digest; write ARG PYTHON_IMAGE=<image>:<tag>@sha256:<digest> (docs/container.md, Pinning the Python base)"
grep -qx '  image: Dockerfile' action.yml ||
  fail "action.yml at $tag does not say 'image: Dockerfile' (is $tag already a release commit?)"

# --- checks: the registry has no image of this version ---------------------------------
# in_registry REF: 0 when the registry has REF, 1 when it answers that it has not; any
# other answer (unreachable, unauthorised) stops the release, since it proves nothing.
# A registry on this machine (CI's) speaks plain HTTP, which the client must be allowed.
inspect_args=()
[[ "$image_registry" =~ ^(127\.|localhost(:|$)) ]] && inspect_args+=(--insecure)
in_registry() {
  local answer
  if answer=$(docker manifest inspect "${inspect_args[@]}" "$1" 2>&1); then
    return 0
  fi
  if grep -qi -e 'no such manifest' -e 'manifest unknown' -e 'name unknown' <<<"$answer"; then
    return 1
  fi
  fail "could not ask $image_registry whether $1 exists: $answer"
}
if in_registry "$image_ref"; then
  fail "$image_ref is already in the registry; an image tag is never pushed twice, so release a new version"
fi
build_base=true
if in_registry "$base_ref"; then
  build_base=false
fi

# --- images ---------------------------------------------------------------------------------
if $build_base; then
  echo "release: building $base_ref"
  docker build --quiet "--network=$network" -f docker/base.Dockerfile \
    --build-arg "PYTHON_IMAGE=$python_image" -t "$base_ref" .
else
  echo "release: reusing $base_ref, which the registry has"
  docker pull --quiet "$base_ref" >/dev/null
fi
echo "release: building $image_ref"
# No network: the Action's layer installs the source from the build context only.
docker build --quiet --network=none --build-arg "BASE=$base_ref" -t "$image_ref" .
reported=$(docker run --rm --network=none --entrypoint retrieval-eval "$image_ref" --version)
[[ "$reported" == *" $version" ]] || fail "the image reports '$reported', not $version"
size=$(docker image inspect --format '{{.Size}}' "$image_ref")
echo "release: $image_ref is $((size / 1000000)) MB"
# A reused base was built by an earlier release, from the pin that release checked.
built_from=$(docker image inspect --format '{{index .Config.Labels "org.opencontainers.image.base.name"}}' "$image_ref")
[[ "$built_from" =~ @sha256:[0-9a-f]{64}$ ]] ||
  fail "$base_ref was not built from a Python image named by digest (its label says '$built_from')"
echo "release: built on $built_from"

# --- publish the images first, so no tag ever names an image that is not there ----------
if $build_base; then
  docker push --quiet "$base_ref" >/dev/null
  echo "release: pushed $base_ref"
fi
docker push --quiet "$image_ref" >/dev/null
repository_digest=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$image_ref" |
  grep -m 1 "^$image_registry/$owner/retrieval-eval@sha256:") ||
  fail "the registry gave no digest for $image_ref"
image_pin=$image_ref@${repository_digest#*@}
echo "release: pushed $image_pin"

# --- the release commit: action.yml names the pushed image by tag and digest -----------
# The digest makes a sha pin of the release commit immutable: even a re-pushed tag could
# not change what the runner pulls.
tree=$(mktemp -d "${TMPDIR:-/tmp}/retrieval-eval-release.XXXXXX")
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
git worktree add --quiet --detach "$tree" "$source_commit"
sed -i "s|^  image: Dockerfile\$|  image: docker://$image_pin|" "$tree/action.yml"
grep -qx "  image: docker://$image_pin" "$tree/action.yml" || fail "could not rewrite action.yml"
# The release commit and tags are made by the workflow's bot unless the environment names
# someone (GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL).
as_releaser=(-c "user.name=${GIT_AUTHOR_NAME:-github-actions[bot]}"
  -c "user.email=${GIT_AUTHOR_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}")
git -C "$tree" add action.yml
git -C "$tree" "${as_releaser[@]}" commit --quiet \
  -m "Release $tag: action.yml runs the prebuilt image $image_pin" \
  -m "Python base: $built_from"
release_commit=$(git -C "$tree" rev-parse HEAD)

message="retrieval-eval $version"
git "${as_releaser[@]}" tag --force --annotate --message "$message" "$tag" "$release_commit" >/dev/null
git "${as_releaser[@]}" tag --force --annotate --message "$message" "$major" "$release_commit" >/dev/null
git push --quiet --force "$remote" "refs/tags/$tag" "refs/tags/$major"
echo "release: $tag and $major -> $release_commit (on top of $source_commit)"
