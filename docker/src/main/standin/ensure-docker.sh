#!/usr/bin/env bash
# ensure-docker.sh: makes sure this machine has a running Docker engine and Docker Compose, installing them from
# Debian's packages (docker.io, docker-compose) and starting dockerd if needed; with --debootstrap also debootstrap,
# which make-standin-image.sh needs. Needs root for what it installs or starts. Prints what it did; exits 0 when
# 'docker info' works, 3 (with the reason) when no engine can run here, 1 on other errors.
set -euo pipefail

log=${DOCKERD_LOG:-/var/log/pulsar-broadcast-dockerd.log}
want_debootstrap=false
[[ ${1:-} == --debootstrap ]] && want_debootstrap=true

cannot() {
  echo "ensure-docker.sh: no Docker engine: $*" >&2
  exit 3
}

packages=()
command -v dockerd >/dev/null 2>&1 || packages+=(docker.io)
command -v docker >/dev/null 2>&1 || packages+=(docker.io)
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1; then
  packages+=(docker-compose)
fi
$want_debootstrap && ! command -v debootstrap >/dev/null 2>&1 && packages+=(debootstrap)
if ((${#packages[@]})); then
  ((EUID == 0)) || cannot "${packages[*]} missing and not root to install them"
  command -v apt-get >/dev/null 2>&1 || cannot "${packages[*]} missing and no apt-get to install them"
  echo "Installing ${packages[*]} from Debian's packages"
  apt-get update -qq >/dev/null || cannot "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null ||
    cannot "apt-get install ${packages[*]} failed"
fi

if docker info >/dev/null 2>&1; then
  echo "Docker engine running: $(docker version --format '{{.Server.Version}}' 2>/dev/null)"
  exit 0
fi
((EUID == 0)) || cannot "dockerd is not running and not root to start it"
echo "Starting dockerd (log: $log)"
# Every container of this project uses the host's network, so dockerd needs no bridge or iptables rules (which this
# kernel may not offer). Its descriptors are closed: a lock the caller holds (flock) must not live on in dockerd.
(
  for fd in /proc/"$BASHPID"/fd/*; do
    fd=${fd##*/}
    if [[ $fd =~ ^[0-9]+$ ]] && ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  exec setsid dockerd --bridge=none --iptables=false --ip6tables=false >"$log" 2>&1 </dev/null
) &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "Docker engine running: $(docker version --format '{{.Server.Version}}' 2>/dev/null)"
    exit 0
  fi
  sleep 1
done
cannot "dockerd did not start within 60 s; the end of $log: $(tail -n 5 "$log" 2>/dev/null | tr '\n' ' ')"
