#!/usr/bin/env bash
# Builds the minimal Debian root filesystem that stands in for `python:3.11-slim-bookworm`
# on machines that reach Debian's package mirror but no image registry, and imports it
# as a Docker image.
#
#   docker/build-rootfs.sh IMAGE_TAG [ROOTFS_DIR]
#
# The mirror is read from this machine's apt configuration at run time, so no host
# name is written down here. The host's CA bundle is installed into the rootfs so that
# pip inside `docker build` trusts the same roots as the host (a TLS-inspecting proxy's
# CA included), as one would do behind a corporate proxy.
set -euo pipefail

tag=${1:?usage: build-rootfs.sh IMAGE_TAG [ROOTFS_DIR]}
rootfs=${2:-$(mktemp -d "${TMPDIR:-/tmp}/retrieval-eval-rootfs.XXXXXX")}
suite=bookworm
host_bundle=/etc/ssl/certs/ca-certificates.crt

# The first configured Debian archive (not -security/-updates) serving the suite.
# shellcheck disable=SC2016 # $(…) here is apt's own field syntax, not the shell's
mirror=$(apt-get indextargets --format '$(REPO_URI) $(ORIGIN) $(LABEL) $(RELEASE)' \
  | awk -v s="$suite" '$2 == "Debian" && $3 == "Debian" && $4 == s { print $1; exit }')
if [[ -z "$mirror" ]]; then
  echo "build-rootfs: no Debian '$suite' archive in apt's sources (run apt-get update first)" >&2
  exit 2
fi

rm -rf "$rootfs"
mkdir -p "$rootfs"
echo "build-rootfs: debootstrap $suite into $rootfs"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
  "$suite" "$rootfs" "$mirror" >"$rootfs.debootstrap.log" 2>&1 || {
  tail -n 40 "$rootfs.debootstrap.log" >&2
  exit 2
}

# Each certificate of the host bundle that Debian's own bundle lacks becomes a local CA of
# the rootfs, so the image's update-ca-certificates keeps it if a later layer runs it again.
local_ca="$rootfs/usr/local/share/ca-certificates/host"
mkdir -p "$local_ca"
awk -v dir="$local_ca" '
  /-----BEGIN CERTIFICATE-----/ { cert = "" }
  { cert = cert $0 "\n" }
  /-----END CERTIFICATE-----/ {
    if (FILENAME == ARGV[1]) { known[cert] = 1 }
    else if (!(cert in known)) { n++; printf "%s", cert > sprintf("%s/host-%03d.crt", dir, n) }
  }
' "$rootfs/etc/ssl/certs/ca-certificates.crt" "$host_bundle"
chroot "$rootfs" update-ca-certificates >"$rootfs.ca.log" 2>&1 || {
  cat "$rootfs.ca.log" >&2
  exit 2
}
rm -f "$rootfs.ca.log"

# What a slim image leaves out: docs, man pages, locales, apt's caches and lists.
rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/usr/share/locale/* "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* \
  "$rootfs"/var/log/*.log "$rootfs"/var/cache/debconf/*-old

echo "build-rootfs: docker import as $tag"
tar -C "$rootfs" -c . | docker import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' \
  - "$tag" >/dev/null
rm -rf "$rootfs" "$rootfs.debootstrap.log"
