# The job image act runs the sharded workflow's jobs in (tests/container/test_act_matrix.py):
# the debootstrapped Debian that stands in for the runner (docker/build-rootfs.sh) plus
# Debian's Node.js, because act runs a JavaScript action's `node` inside the job container
# and that workflow's artifact steps are JavaScript actions. A separate image, so the
# Action's own base (built on the same Debian) carries no Node.js.
#
#   docker build --network=host -f docker/act-runner.Dockerfile \
#     --build-arg RUNNER_IMAGE=<debootstrapped image> -t <tag> .
ARG RUNNER_IMAGE=debian:bookworm-slim
FROM ${RUNNER_IMAGE}

RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs \
    && rm -rf /var/lib/apt/lists/*
