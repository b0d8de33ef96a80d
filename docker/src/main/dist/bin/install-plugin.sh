#!/usr/bin/env bash
# install-plugin.sh: adds pulsar-broadcast @project.version@ to an Apache Pulsar @pulsar.version@ installation, or
# removes it again (--uninstall). Run it on every broker host, then restart the brokers one at a time
# (docs/install.md). Running it twice changes nothing the second time. Needs bash 4.4 or newer.
set -euo pipefail

readonly VERSION="@project.version@"
readonly PULSAR_VERSION="@pulsar.version@"
readonly INTERCEPTOR="broadcast-subscription"
readonly SERVLET="broadcast-consumers"
readonly NAR="broadcast-subscription.nar"
readonly JAR_PREFIX="io.github.pulsarbroadcast-"
readonly BEGIN_PREFIX="# >>> pulsar-broadcast"
readonly END_PREFIX="# <<< pulsar-broadcast"
readonly BEGIN_LINE="$BEGIN_PREFIX $VERSION: added by bin/install-plugin.sh; 'bin/install-plugin.sh --uninstall' removes this block >>>"
readonly END_LINE="$END_PREFIX <<<"

DIST=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly DIST

usage() {
  cat <<USAGE
Usage: $(basename "$0") [options] PULSAR_HOME

Installs pulsar-broadcast $VERSION into the Apache Pulsar installation PULSAR_HOME (for example /pulsar):
  - copies lib/*.jar of this distribution to PULSAR_HOME/lib/ (and removes other versions of them),
  - copies interceptors/$NAR to the broker's brokerInterceptorsDirectory (default PULSAR_HOME/interceptors),
  - copies the same NAR to the broker's additionalServletDirectory when broker.conf sets another one (the NAR
    is also the consumer listing's additional servlet),
  - adds the keys of conf/broadcast.conf to PULSAR_HOME/conf/broker.conf in a marked block, adding
    $INTERCEPTOR to brokerInterceptors and $SERVLET to additionalServlets, and leaving every key that
    broker.conf already sets as it is.
Changes take effect when the broker restarts.

Options:
  --dry-run      Print what would change (with a diff of each configuration file) and change nothing.
  --uninstall    Remove what an install added: the block, $INTERCEPTOR from brokerInterceptors, $SERVLET
                 from additionalServlets, the jars and the NAR.
  --conf FILE    Configuration file to edit, absolute or relative to PULSAR_HOME; repeat for several
                 (default: conf/broker.conf). The Docker image uses --conf conf/broker.conf --conf conf/standalone.conf.
  --force        Install even if PULSAR_HOME is not Pulsar ${PULSAR_VERSION%.*}.x.
  -h, --help     This text.

PULSAR_HOME may also be given as the environment variable PULSAR_HOME.
USAGE
}

die() {
  echo "install-plugin.sh: $*" >&2
  exit 1
}
warn() { echo "WARNING: $*" >&2; }

dry_run=false
uninstall=false
force=false
confs=()
home=""
while (($#)); do
  case $1 in
    --dry-run) dry_run=true ;;
    --uninstall) uninstall=true ;;
    --force) force=true ;;
    --conf)
      (($# >= 2)) || die "--conf needs a file name"
      confs+=("$2")
      shift
      ;;
    --conf=*) confs+=("${1#--conf=}") ;;
    -h | --help)
      usage
      exit 0
      ;;
    -*)
      echo "install-plugin.sh: unknown option $1" >&2
      usage >&2
      exit 2
      ;;
    *)
      [[ -z $home ]] || die "give one PULSAR_HOME, not '$home' and '$1'"
      home=$1
      ;;
  esac
  shift
done
home=${home:-${PULSAR_HOME:-}}
if [[ -z $home ]]; then
  usage >&2
  exit 2
fi
((${#confs[@]})) || confs=(conf/broker.conf)

# --- What this distribution holds -------------------------------------------------------------------------------

shopt -s nullglob
DIST_JARS=("$DIST"/lib/"$JAR_PREFIX"*.jar)
shopt -u nullglob
((${#DIST_JARS[@]})) || die "no $DIST/lib/$JAR_PREFIX*.jar: is this script inside the unpacked distribution?"
[[ -f $DIST/interceptors/$NAR ]] || die "missing $DIST/interceptors/$NAR"
[[ -f $DIST/conf/broadcast.conf ]] || die "missing $DIST/conf/broadcast.conf"
mapfile -t TEMPLATE <"$DIST/conf/broadcast.conf"

# --- The Pulsar installation ------------------------------------------------------------------------------------

[[ -d $home/lib ]] || die "$home is not a Pulsar installation (no lib/ directory)"
home=$(cd "$home" && pwd)
conf_paths=()
for c in "${confs[@]}"; do
  [[ $c == /* ]] || c="$home/$c"
  [[ -f $c ]] || die "no configuration file $c"
  conf_paths+=("$c")
done

shopt -s nullglob
broker_jars=("$home"/lib/org.apache.pulsar-pulsar-broker-[0-9]*.jar)
shopt -u nullglob
if ((${#broker_jars[@]})); then
  found=${broker_jars[0]##*/org.apache.pulsar-pulsar-broker-}
  found=${found%.jar}
  if [[ $found != "${PULSAR_VERSION%.*}".* ]]; then
    if $uninstall || $force; then
      warn "$home is Pulsar $found; pulsar-broadcast $VERSION is built for Pulsar $PULSAR_VERSION"
    else
      die "$home is Pulsar $found; pulsar-broadcast $VERSION works with Pulsar ${PULSAR_VERSION%.*}.x only" \
        "(it subclasses broker internals). Use --force to install anyway."
    fi
  fi
else
  warn "no lib/org.apache.pulsar-pulsar-broker-*.jar in $home: cannot check that it is Pulsar ${PULSAR_VERSION%.*}.x"
fi
if ! $dry_run; then
  [[ -w $home/lib ]] || die "cannot write $home/lib (run as the user that owns the Pulsar installation)"
fi

say() {
  if $dry_run; then echo "[dry-run] would $*"; else echo "$*"; fi
}

# --- Configuration files ----------------------------------------------------------------------------------------
# A line "key=value" not starting with # or ! sets a key; for a key set twice, the last line wins (as in
# java.util.Properties, which the broker uses). Added lines never contain '=' in comments, because the image's
# apply-config-from-env.py reads "#key=value" comments as keys.

readonly KV_RE='^[[:space:]]*([A-Za-z0-9_.-]+)[[:space:]]*=[[:space:]]*(.*)$'
KV_KEY=""
KV_VAL=""
parse_kv() {
  [[ $1 =~ ^[[:space:]]*[#!] ]] && return 1
  [[ $1 =~ $KV_RE ]] || return 1
  KV_KEY=${BASH_REMATCH[1]}
  KV_VAL=${BASH_REMATCH[2]}
  KV_VAL=${KV_VAL%"${KV_VAL##*[![:space:]]}"}
  return 0
}

# list_add LIST ITEM / list_remove LIST ITEM: comma-separated lists such as brokerInterceptors.
list_add() {
  local item
  local -a items
  IFS=',' read -ra items <<<"$1"
  for item in "${items[@]}"; do
    item=${item//[[:space:]]/}
    if [[ $item == "$2" ]]; then
      printf '%s' "$1"
      return
    fi
  done
  if [[ -z ${1//[[:space:],]/} ]]; then printf '%s' "$2"; else printf '%s,%s' "$1" "$2"; fi
}
list_remove() {
  local item out="" found=false
  local -a items
  IFS=',' read -ra items <<<"$1"
  for item in "${items[@]}"; do
    item=${item//[[:space:]]/}
    if [[ $item == "$2" ]]; then
      found=true
    elif [[ -n $item ]]; then
      out+="${out:+,}$item"
    fi
  done
  if $found; then printf '%s' "$out"; else printf '%s' "$1"; fi
}

# list_item KEY: what this plugin adds to the list KEY (empty for a key that is not one of those lists).
list_item() {
  case $1 in
    brokerInterceptors) printf '%s' "$INTERCEPTOR" ;;
    additionalServlets) printf '%s' "$SERVLET" ;;
  esac
}

LINES=()
OUTSIDE=()
NEW=()
BLOCK_ORDER=()
declare -A BLOCK_VALS=()
CONF=""

# split_block: LINES -> OUTSIDE (every line but the block and the blank line before it) and the keys set inside
# the block (BLOCK_ORDER, BLOCK_VALS).
split_block() {
  local line inside=false seen=false n
  OUTSIDE=()
  BLOCK_ORDER=()
  BLOCK_VALS=()
  for line in "${LINES[@]}"; do
    if ! $inside && [[ $line == "$BEGIN_PREFIX"* ]]; then
      $seen && die "$CONF has two pulsar-broadcast blocks: remove one by hand"
      inside=true
      seen=true
      n=${#OUTSIDE[@]}
      if ((n)) && [[ -z ${OUTSIDE[n - 1]} ]]; then
        unset "OUTSIDE[$((n - 1))]"
        OUTSIDE=("${OUTSIDE[@]}")
      fi
      continue
    fi
    if $inside; then
      if [[ $line == "$END_PREFIX"* ]]; then
        inside=false
      elif parse_kv "$line"; then
        [[ -v "BLOCK_VALS[$KV_KEY]" ]] || BLOCK_ORDER+=("$KV_KEY")
        BLOCK_VALS[$KV_KEY]=$KV_VAL
      fi
      continue
    fi
    OUTSIDE+=("$line")
  done
  $inside && die "$CONF: the pulsar-broadcast block has no end line ('$END_LINE'): fix it by hand"
  return 0
}

# outside_last KEY: index of the last line of OUTSIDE that sets KEY, or -1.
outside_last() {
  local i
  for ((i = ${#OUTSIDE[@]} - 1; i >= 0; i--)); do
    if parse_kv "${OUTSIDE[i]}" && [[ $KV_KEY == "$1" ]]; then
      echo "$i"
      return
    fi
  done
  echo -1
}
outside_value() {
  parse_kv "${OUTSIDE[$1]}"
  printf '%s' "$KV_VAL"
}
# outside_set KEY VALUE: every line of OUTSIDE that sets KEY now sets it to VALUE.
outside_set() {
  local i
  for i in "${!OUTSIDE[@]}"; do
    if parse_kv "${OUTSIDE[i]}" && [[ $KV_KEY == "$1" ]]; then
      OUTSIDE[i]="$1=$2"
    fi
  done
}

# effective KEY LINE...: the value the broker will use (last line wins), empty if none.
effective() {
  local key=$1 line value=""
  shift
  for line in "$@"; do
    if parse_kv "$line" && [[ $KV_KEY == "$key" ]]; then value=$KV_VAL; fi
  done
  printf '%s' "$value"
}

# conf_install: LINES -> NEW, with the block (re)built from conf/broadcast.conf. Values set inside an earlier
# block are kept; keys set outside the block stay as they are (an empty value there gets ours).
conf_install() {
  split_block
  local line k v idx current updated item
  local -a block=("" "$BEGIN_LINE" "# Every key, its default and its meaning: docs/configuration.md of pulsar-broadcast $VERSION.")
  local header=true
  for line in "${TEMPLATE[@]}"; do
    # The template's first paragraph is about the file itself: not copied.
    if $header; then
      [[ -z $line ]] && header=false
      continue
    fi
    if ! parse_kv "$line"; then
      block+=("$line")
      continue
    fi
    k=$KV_KEY
    v=$KV_VAL
    item=$(list_item "$k")
    if [[ -v "BLOCK_VALS[$k]" ]]; then
      v=${BLOCK_VALS[$k]}
      unset "BLOCK_VALS[$k]"
    elif [[ $k == additionalServletDirectory ]]; then
      # The servlet is the interceptor's NAR: by default, look for it where the interceptor is.
      current=$(effective brokerInterceptorsDirectory "${OUTSIDE[@]}")
      [[ -z $current ]] || v=$current
    fi
    idx=$(outside_last "$k")
    if ((idx < 0)); then
      [[ -n $item ]] && v=$(list_add "$v" "$item")
      block+=("$k=$v")
      continue
    fi
    current=$(outside_value "$idx")
    if [[ -n $item ]]; then
      updated=$(list_add "$current" "$item")
      [[ $updated == "$current" ]] || outside_set "$k" "$updated"
      block+=("# $k: set earlier in this file, with $item added to its list")
    else
      [[ -z $current && -n $v ]] && outside_set "$k" "$v"
      block+=("# $k: set earlier in this file; that line is the one used")
    fi
  done
  for k in "${BLOCK_ORDER[@]}"; do
    [[ -v "BLOCK_VALS[$k]" ]] || continue
    if [[ $k == broadcast* ]]; then
      warn "$CONF: $k is not a key of pulsar-broadcast $VERSION (the plugin would refuse to start): commented out"
      block+=("# $k: not a key of pulsar-broadcast $VERSION, commented out by install-plugin.sh" "#$k=${BLOCK_VALS[$k]}")
    else
      warn "$CONF: $k is set inside the pulsar-broadcast block: kept there, but --uninstall will remove it"
      block+=("$k=${BLOCK_VALS[$k]}")
    fi
  done
  block+=("$END_LINE")
  NEW=("${OUTSIDE[@]}" "${block[@]}")
}

# outside_remove KEY: drops every line of OUTSIDE that sets KEY.
outside_remove() {
  local line
  local -a kept=()
  for line in "${OUTSIDE[@]}"; do
    if parse_kv "$line" && [[ $KV_KEY == "$1" ]]; then continue; fi
    kept+=("$line")
  done
  OUTSIDE=("${kept[@]}")
}

# uninstall_list KEY: takes this plugin's item out of the list KEY, set outside the block or inside it.
uninstall_list() {
  local key=$1 item idx current rest
  item=$(list_item "$key")
  idx=$(outside_last "$key")
  if ((idx >= 0)); then
    current=$(outside_value "$idx")
    rest=$(list_remove "$current" "$item")
    if [[ $key == additionalServlets && -z ${rest//[[:space:],]/} && $rest != "$current" ]]; then
      # Pulsar 2.10 refuses to start with an empty additionalServlets (it looks for a servlet named ""): drop it.
      outside_remove "$key"
      echo "$CONF: removed additionalServlets (no other servlet was listed)"
    else
      [[ $rest == "$current" ]] || outside_set "$key" "$rest"
    fi
  elif [[ -v "BLOCK_VALS[$key]" ]]; then
    rest=$(list_remove "${BLOCK_VALS[$key]}" "$item")
    if [[ -n ${rest//[[:space:],]/} ]]; then
      OUTSIDE+=("$key=$rest")
      echo "$CONF: kept the other entries: $key=$rest"
      if [[ $key == additionalServlets && -v "BLOCK_VALS[additionalServletDirectory]" ]]; then
        OUTSIDE+=("additionalServletDirectory=${BLOCK_VALS[additionalServletDirectory]}")
      fi
    fi
  fi
}

# conf_uninstall: LINES -> NEW without the block, $INTERCEPTOR in brokerInterceptors and $SERVLET in
# additionalServlets.
conf_uninstall() {
  split_block
  local k line
  uninstall_list brokerInterceptors
  uninstall_list additionalServlets
  for k in "${BLOCK_ORDER[@]}"; do
    case $k in
      broadcast* | brokerInterceptors | brokerInterceptorsDirectory | additionalServlets | additionalServletDirectory) ;;
      *) warn "$CONF: removed $k=${BLOCK_VALS[$k]}, which was inside the pulsar-broadcast block" ;;
    esac
  done
  for line in "${OUTSIDE[@]}"; do
    if parse_kv "$line" && [[ $KV_KEY == broadcast* ]]; then
      echo "$CONF: left $KV_KEY as it is (a broker without the plugin ignores it)"
    fi
  done
  NEW=("${OUTSIDE[@]}")
}

# write_conf FILE: shows the change to FILE and (unless --dry-run) writes NEW into it, keeping its owner and mode.
write_conf() {
  local file=$1 tmp
  tmp=$(mktemp)
  printf '%s\n' "${NEW[@]}" >"$tmp"
  if cmp -s "$tmp" "$file"; then
    echo "${file#"$home"/}: already up to date"
  else
    say "change ${file#"$home"/}:"
    if command -v diff >/dev/null 2>&1; then
      diff -u --label "${file#"$home"/} (before)" --label "${file#"$home"/} (after)" "$file" "$tmp" || true
    fi
    $dry_run || cat "$tmp" >"$file"
  fi
  rm -f "$tmp"
}

# interceptors_dir LINE...: the directory the broker loads the NAR from.
interceptors_dir() {
  local dir
  dir=$(effective brokerInterceptorsDirectory "$@")
  dir=${dir:-./interceptors}
  if [[ $dir != /* ]]; then
    dir=${dir#./}
    dir="$home/$dir"
  fi
  printf '%s' "${dir%/}"
}

# servlets_dir LINE...: the directory the broker loads additional servlets from, if the configuration loads them.
servlets_dir() {
  local dir
  dir=$(effective additionalServletDirectory "$@")
  [[ -n $dir ]] || return 0
  if [[ $dir != /* ]]; then
    dir=${dir#./}
    dir="$home/$dir"
  fi
  printf '%s' "${dir%/}"
}

# --- Install / uninstall ----------------------------------------------------------------------------------------

declare -A NAR_DIRS=()
if ! $uninstall; then
  # Configuration first in memory (it decides where the NAR goes), files next, configuration files last: a
  # broker restarted half way never names a NAR that is not there yet.
  declare -A NEW_CONF=()
  for CONF in "${conf_paths[@]}"; do
    mapfile -t LINES <"$CONF"
    conf_install
    NEW_CONF[$CONF]=$(printf '%s\n' "${NEW[@]}")
    NAR_DIRS[$(interceptors_dir "${NEW[@]}")]=1
    servlets=$(servlets_dir "${NEW[@]}")
    [[ -z $servlets ]] || NAR_DIRS[$servlets]=1
  done

  our_jars=" "
  for jar in "${DIST_JARS[@]}"; do our_jars+="${jar##*/} "; done
  shopt -s nullglob
  for old in "$home"/lib/"$JAR_PREFIX"*.jar; do
    [[ $our_jars == *" ${old##*/} "* ]] && continue
    say "remove lib/${old##*/} (another version of the plugin)"
    $dry_run || rm -f "$old"
  done
  shopt -u nullglob
  for jar in "${DIST_JARS[@]}"; do
    if cmp -s "$jar" "$home/lib/${jar##*/}"; then
      echo "lib/${jar##*/}: already installed"
    else
      say "copy lib/${jar##*/} to $home/lib/"
      $dry_run || { cp "$jar" "$home/lib/" && chmod 644 "$home/lib/${jar##*/}"; }
    fi
  done
  for dir in "${!NAR_DIRS[@]}"; do
    if cmp -s "$DIST/interceptors/$NAR" "$dir/$NAR"; then
      echo "$dir/$NAR: already installed"
    else
      say "copy interceptors/$NAR to $dir/"
      $dry_run || { mkdir -p "$dir" && cp "$DIST/interceptors/$NAR" "$dir/" && chmod 644 "$dir/$NAR"; }
    fi
  done

  for CONF in "${conf_paths[@]}"; do
    mapfile -t NEW <<<"${NEW_CONF[$CONF]}"
    write_conf "$CONF"
  done
  if $dry_run; then
    echo "Dry run: nothing was changed."
  else
    echo "pulsar-broadcast $VERSION is installed in $home. Restart the broker; its log then shows" \
      "'pulsar-broadcast installed its connection handler'."
  fi
else
  for CONF in "${conf_paths[@]}"; do
    mapfile -t LINES <"$CONF"
    NAR_DIRS[$(interceptors_dir "${LINES[@]}")]=1
    servlets=$(servlets_dir "${LINES[@]}")
    [[ -z $servlets ]] || NAR_DIRS[$servlets]=1
    conf_uninstall
    write_conf "$CONF"
  done
  for dir in "${!NAR_DIRS[@]}"; do
    if [[ -e $dir/$NAR ]]; then
      say "remove $dir/$NAR"
      $dry_run || rm -f "$dir/$NAR"
    fi
  done
  shopt -s nullglob
  for jar in "$home"/lib/"$JAR_PREFIX"*.jar; do
    say "remove lib/${jar##*/}"
    $dry_run || rm -f "$jar"
  done
  shopt -u nullglob
  if $dry_run; then
    echo "Dry run: nothing was changed."
  else
    echo "pulsar-broadcast is removed from $home. Restart the broker: broadcast subscriptions then behave as" \
      "stock Failover subscriptions (only the active consumer receives messages)."
  fi
fi
