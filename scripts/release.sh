#!/usr/bin/env bash
# Publishes a release: builds the dependency base and the Action's image for a version tag,
# pushes both, commits the released action.yml (`image: docker://…:<version>`, so users'
# runners pull the prebuilt image instead of building one) on top of the tagged commit, and
# points the version tag and the major tag at that release commit.
#
#   scripts/release.sh vX.Y.Z
#
# Run from a checkout of the tag (.github/workflows/release.yml does, on every `v*.*.*`
# tag; CI runs it against a local registry). Settings, from the environment:
#
#   RELEASE_OWNER          image namespace, e.g. the GitHub owner (required; lower-cased)
#   RELEASE_REGISTRY       registry host[:port] (default ghcr.io)
#   RELEASE_REMOTE         git remote the tags are pushed to (default origin)
#   RELEASE_BUILD_NETWORK  network of the base build, which reaches PyPI (default host)
#   PYTHON_IMAGE           Python image the base starts from (default: base.Dockerfile's)
#
# Nothing is pushed unless every check passes: the tag, pyproject.toml's version and the
# base the Dockerfile names agree, main's action.yml builds the Dockerfile, and the built
# image reports the version.
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
owner=${RELEASE_OWNER:?release: set RELEASE_OWNER (the image namespace, e.g. the GitHub owner)}
owner=${owner,,} # registries accept lower-case repository names only
image_registry=${RELEASE_REGISTRY:-ghcr.io}
remote=${RELEASE_REMOTE:-origin}
network=${RELEASE_BUILD_NETWORK:-host}
base_ref=$image_registry/$owner/retrieval-eval-base:$version
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
dockerfile_base=$(sed -n 's/^ARG BASE=//p' Dockerfile)
[[ "${dockerfile_base##*:}" == "$version" ]] ||
  fail "Dockerfile builds on $dockerfile_base, not on the $version base"
grep -qx '  image: Dockerfile' action.yml ||
  fail "action.yml at $tag does not say 'image: Dockerfile' (is $tag already a release commit?)"

# --- images ---------------------------------------------------------------------------------
echo "release: building $base_ref"
base_args=()
[[ -n "${PYTHON_IMAGE:-}" ]] && base_args+=(--build-arg "PYTHON_IMAGE=$PYTHON_IMAGE")
docker build --quiet "--network=$network" -f docker/base.Dockerfile "${base_args[@]}" \
  -t "$base_ref" .
echo "release: building $image_ref"
# No network: the Action's layer installs the source from the build context only.
docker build --quiet --network=none --build-arg "BASE=$base_ref" -t "$image_ref" .
reported=$(docker run --rm --network=none --entrypoint retrieval-eval "$image_ref" --version)
[[ "$reported" == *" $version" ]] || fail "the image reports '$reported', not $version"
size=$(docker image inspect --format '{{.Size}}' "$image_ref")
echo "release: $image_ref is $((size / 1000000)) MB"

# --- the release commit: action.yml names the prebuilt image ---------------------------
tree=$(mktemp -d "${TMPDIR:-/tmp}/retrieval-eval-release.XXXXXX")
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
git worktree add --quiet --detach "$tree" "$source_commit"
sed -i "s|^  image: Dockerfile\$|  image: docker://$image_ref|" "$tree/action.yml"
grep -qx "  image: docker://$image_ref" "$tree/action.yml" || fail "could not rewrite action.yml"
# The release commit and tags are made by the workflow's bot unless the environment names
# someone (GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL).
as_releaser=(-c "user.name=${GIT_AUTHOR_NAME:-github-actions[bot]}"
  -c "user.email=${GIT_AUTHOR_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}")
git -C "$tree" add action.yml
git -C "$tree" "${as_releaser[@]}" commit --quiet \
  -m "Release $tag: action.yml runs the prebuilt image $image_ref"
release_commit=$(git -C "$tree" rev-parse HEAD)

# --- publish: images first, so no tag ever names an image that is not there -------------
docker push --quiet "$base_ref" >/dev/null
docker push --quiet "$image_ref" >/dev/null
echo "release: pushed $base_ref and $image_ref"
message="retrieval-eval $version"
git "${as_releaser[@]}" tag --force --annotate --message "$message" "$tag" "$release_commit" >/dev/null
git "${as_releaser[@]}" tag --force --annotate --message "$message" "$major" "$release_commit" >/dev/null
git push --quiet --force "$remote" "refs/tags/$tag" "refs/tags/$major"
echo "release: $tag and $major -> $release_commit (on top of $source_commit)"
