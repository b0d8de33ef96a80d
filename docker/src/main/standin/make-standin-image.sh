#!/usr/bin/env bash
# make-standin-image.sh: builds a local stand-in for apachepulsar/pulsar:@pulsar.version@ (which no registry here can
# provide) from Debian's packages and the Pulsar @pulsar.version@ jars of Maven Central, laid out like that image:
#   /pulsar/bin      bin/pulsar (starts zookeeper, bookie, broker, standalone, initialize-cluster-metadata with the
#                    main classes Pulsar's own bin/pulsar uses) and bin/apply-config-from-env.py
#   /pulsar/conf     zookeeper.conf, bookkeeper.conf, broker.conf, standalone.conf, log4j2.xml (short; every key not
#                    set has Pulsar's default)
#   /pulsar/lib      the jars (groupId-artifactId-version.jar, as in the Pulsar distribution)
#   /pulsar/data, download, logs and conf writable by the root group; WORKDIR /pulsar; USER 10000 (group 0)
# The root file system is 'debootstrap --variant=minbase --include=openjdk-17-jre-headless,python3 bookworm' from
# the Debian mirror apt uses (cached in $PULSAR_BROADCAST_CACHE, default ~/.cache/pulsar-broadcast), then
# 'docker import'. The real image runs JDK 11 on Ubuntu; see docs/install.md for what this stand-in does not prove.
#
# Usage: make-standin-image.sh LIB_DIR [TAG]   (TAG default pulsar-standin:@pulsar.version@; needs root and docker)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lib=${1:?usage: make-standin-image.sh LIB_DIR [TAG]}
tag=${2:-pulsar-standin:@pulsar.version@}
cache=${PULSAR_BROADCAST_CACHE:-$HOME/.cache/pulsar-broadcast}

die() {
  echo "make-standin-image.sh: $*" >&2
  exit 1
}
[[ -f $lib/org.apache.pulsar-pulsar-broker-@pulsar.version@.jar ]] ||
  die "$lib has no org.apache.pulsar-pulsar-broker-@pulsar.version@.jar (build module cluster first)"
((EUID == 0)) || die "debootstrap and the image's file ownership need root"
docker info >/dev/null 2>&1 || die "no Docker engine (ensure-docker.sh starts one)"

# The mirror apt uses (deb822 sources first, then sources.list).
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1 || true)
if [[ -z $mirror ]]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /security/ { print ($2 ~ /^\[/ ? $3 : $2); exit }' /etc/apt/sources.list 2>/dev/null || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}

rootfs_tar=$cache/debian-bookworm-minbase-openjdk17-python3.tar
mkdir -p "$cache"
if [[ ! -s $rootfs_tar ]]; then
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing ('ensure-docker.sh --debootstrap' installs it)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "debootstrap bookworm from $mirror (once; cached in $rootfs_tar)"
  debootstrap --variant=minbase --include=openjdk-17-jre-headless,python3 bookworm "$tmp/rootfs" "$mirror" \
    >"$cache/debootstrap.log" 2>&1 || die "debootstrap failed: see $cache/debootstrap.log"
  rm -rf "$tmp"/rootfs/var/cache/apt/archives/*.deb "$tmp"/rootfs/var/lib/apt/lists/*
  tar -C "$tmp/rootfs" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
  rm -rf "$tmp"
  trap - EXIT
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs"
tar -C "$work/rootfs" -xf "$rootfs_tar"
p=$work/rootfs/pulsar
mkdir -p "$p/bin" "$p/conf" "$p/lib" "$p/data" "$p/download" "$p/logs"
cp "$lib"/*.jar "$p/lib/"
install -m 755 "$HERE/pulsar" "$HERE/apply-config-from-env.py" "$p/bin/"
install -m 644 "$HERE"/conf/* "$p/conf/"
chown -R 0:0 "$p"
chmod -R g+w "$p/conf" "$p/data" "$p/download" "$p/logs"
chmod -R o+rX "$p"
java_home=$(compgen -G "$work/rootfs/usr/lib/jvm/java-17-openjdk-*" | head -n 1 || true)
[[ -n $java_home && -x $java_home/bin/java ]] || die "no JRE 17 under /usr/lib/jvm in the root file system"
java_home=${java_home#"$work/rootfs"}

echo "docker import as $tag"
tar -C "$work/rootfs" -c . | docker import \
  --change 'WORKDIR /pulsar' \
  --change 'USER 10000' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PULSAR_HOME=/pulsar' \
  --change "ENV JAVA_HOME=$java_home" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/pulsar/bin' \
  --change 'CMD ["bin/pulsar", "standalone"]' \
  --message "stand-in for apachepulsar/pulsar:@pulsar.version@ (pulsar-broadcast make-standin-image.sh)" \
  - "$tag" >/dev/null
echo "Built $tag"
