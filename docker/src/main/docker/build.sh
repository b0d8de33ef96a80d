#!/bin/sh
# Builds the pulsar-broadcast broker image from this directory, the Docker build context that Maven assembled, and
# tags it with the name in ./IMAGE (@docker.image@). Extra arguments go to "docker build", for example
#   ./build.sh --build-arg PULSAR_IMAGE=apachepulsar/pulsar-all:@pulsar.version@
set -eu
cd "$(dirname "$0")"
image=$(cat IMAGE)
echo "Building $image"
exec docker build -t "$image" "$@" .
