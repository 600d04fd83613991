#!/usr/bin/env bash
# Builds the NDN reference implementations Nameway is compared against — ndn-cxx (library and
# ndnsec), NFD (nfd, nfdc) and ndn-tools (ndnget, ndnserve, ndnping, ndnpingserver, ...) — from
# source at the commits pinned below, and installs them under $NAMEWAY_NFD (default
# ~/nameway-nfd):
#
#   $NAMEWAY_NFD/prefix/       bin/, lib/ (binaries carry an rpath to lib/)
#   $NAMEWAY_NFD/env.sh        source it: PATH, LD_LIBRARY_PATH and a client keychain
#   $NAMEWAY_NFD/nfd-start     starts one NFD in a network namespace of its own; prints its PID
#   $NAMEWAY_NFD/versions.txt  the commits installed
#
# scripts/bench-transport.sh, scripts/bench-wan.sh, scripts/interop-ndn-tools.sh and
# `nameway lab` (NFD nodes, the NFD columns of the reproductions) look there.
#
# Where the sources come from, first that applies:
#   NDN_CXX_GIT / NFD_GIT / NDN_TOOLS_GIT   a git directory (bare or not) or URL per project
#   MIRROR                                   a folder with MIRROR/named-data+ndn-cxx/repo,
#                                            MIRROR/named-data+NFD/repo, MIRROR/named-data+ndn-tools/repo
#   otherwise                                https://github.com/named-data/<project>.git
# (a machine without access to GitHub needs one of the first two).
#
# Other settings: NDN_CXX_COMMIT / NFD_COMMIT / NDN_TOOLS_COMMIT override the pins; JOBS
# (default: the number of CPUs) parallel compiles, run under `nice -n 10`. Needs root (or sudo)
# for apt-get when Debian build dependencies are missing. Running it again skips what is
# already installed at the pinned commit; a changed ndn-cxx rebuilds the two others.
#
#   bash scripts/build-nfd.sh                                  # from GitHub
#   MIRROR=/path/to/mirrors bash scripts/build-nfd.sh          # from local snapshots
#   . ~/nameway-nfd/env.sh && NFDPID=$(~/nameway-nfd/nfd-start) && nfdc status
set -euo pipefail

# Pinned commits: the newest of each project that build together on Debian 12 (Boost 1.74,
# GCC 12, OpenSSL 3). NFD is built without WebSocket support (its websocketpp submodule is a
# separate repository).
NDN_CXX_COMMIT="${NDN_CXX_COMMIT:-a362e65e4ae45b6ccb133937cd6125ad1e328266}"     # 2025-11-18
NFD_COMMIT="${NFD_COMMIT:-fe044ce3f28f8d4e6f2890f83f9cc2c897834ac1}"             # 2026-01-30
NDN_TOOLS_COMMIT="${NDN_TOOLS_COMMIT:-65e2bfa4ecae6062da3a55e9514e679ea34418eb}" # 2026-07-10

OUT="${NAMEWAY_NFD:-$HOME/nameway-nfd}"
JOBS="${JOBS:-$(nproc)}"
PREFIX="$OUT/prefix"

say() { printf '[build-nfd %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "error: $*"; exit 1; }

# source_of PROJECT VAR: where PROJECT's git history comes from.
source_of() {
    local project="$1" var="$2"
    if [ -n "${!var:-}" ]; then
        printf '%s\n' "${!var}"
    elif [ -n "${MIRROR:-}" ]; then
        printf '%s\n' "$MIRROR/named-data+$project/repo"
    else
        say "$project: neither $var nor MIRROR is set: cloning from GitHub (needs network access)"
        printf 'https://github.com/named-data/%s.git\n' "$project"
    fi
}

install_build_deps() {
    # What the three projects' CI installs on Debian, plus git.
    local wanted=(g++ pkgconf python3 git dpkg-dev libssl-dev libsqlite3-dev libpcap-dev
        libsystemd-dev libboost-dev libboost-chrono-dev libboost-date-time-dev libboost-log-dev
        libboost-program-options-dev libboost-stacktrace-dev libboost-thread-dev iproute2
        util-linux)
    local missing=() p
    for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
            || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing Debian packages: ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q >&2 || say "apt-get update failed; trying the install anyway"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >&2
}

# checkout PROJECT SOURCE COMMIT VAR: a work tree of SOURCE at COMMIT in $OUT/src/PROJECT.
checkout() {
    local project="$1" src="$2" commit="$3" var="$4" tree="$OUT/src/$1"
    if [ ! -d "$tree/.git" ]; then
        say "$project: cloning $src"
        git clone -q --no-checkout "$src" "$tree" \
            || die "cannot clone $src (no network access to GitHub? set MIRROR or $var)"
    fi
    if ! git -C "$tree" cat-file -e "$commit^{commit}" 2>/dev/null; then
        git -C "$tree" fetch -q "$src" || die "cannot fetch $src"
    fi
    git -C "$tree" cat-file -e "$commit^{commit}" 2>/dev/null \
        || die "$project: commit $commit is not in $src"
    git -C "$tree" checkout -q --force --detach "$commit"
}

# waf_install PROJECT COMMIT FILE CONFIGURE-OPTIONS...: configure, build and install PROJECT
# unless COMMIT is installed already and FILE exists.
waf_install() {
    local project="$1" commit="$2" file="$3" tree="$OUT/src/$1" stamp="$PREFIX/.installed-$1"
    shift 3
    if [ -e "$file" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$commit" ]; then
        say "$project ${commit:0:12} is installed"
        return 0
    fi
    local start=$SECONDS
    say "$project ${commit:0:12}: configure, build (-j$JOBS), install"
    (
        cd "$tree"
        nice -n 10 python3 ./waf configure --prefix="$PREFIX" "$@" >&2
        nice -n 10 python3 ./waf build -j"$JOBS" >&2
        python3 ./waf install >&2
    ) || die "$project failed to build; the output above says where"
    printf '%s\n' "$commit" > "$stamp"
    say "$project built in $((SECONDS - start)) s"
}

write_env() {
    local keychain="$OUT/keychain"
    cat > "$OUT/env.sh" <<EOF
# Written by scripts/build-nfd.sh. Source it to use the NDN tools built under $PREFIX.
export PATH="$PREFIX/bin:\$PATH"
export LD_LIBRARY_PATH="$PREFIX/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
# ndn-cxx clients (nfdc, ndnget, ndnserve, ndnsec) keep their keys here rather than in ~/.ndn.
export NDN_CLIENT_PIB="pib-sqlite3:$keychain"
export NDN_CLIENT_TPM="tpm-file:$keychain/tpm"
EOF
    mkdir -p "$keychain"
    # shellcheck disable=SC1091
    ( . "$OUT/env.sh"
      if ! ndnsec get-default >/dev/null 2>&1; then
          say "client identity /localhost/operator in $keychain"
          ndnsec key-gen /localhost/operator | ndnsec cert-install - >/dev/null
      fi )
}

write_nfd_start() {
    cat > "$OUT/nfd-start" <<'EOF'
#!/usr/bin/env bash
# Written by scripts/build-nfd.sh. Starts NFD in a network namespace of its own (only `lo` is
# up there) with its Unix socket at DIR/nfd.sock (DIR: first argument, default /tmp/nfd),
# logging at WARN to DIR/nfd.log, a 65536-packet LRU content store, best-route on /, and any
# signed management command allowed. Prints NFD's PID and nothing else; stop it with kill PID.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${1:-/tmp/nfd}"
sock="$dir/nfd.sock"
mkdir -p "$dir/home/.ndn"
export PATH="$here/prefix/bin:$PATH"
export LD_LIBRARY_PATH="$here/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NFD signs its management responses with a key of its own, kept beside its socket.
export HOME="$dir/home"
export NDN_CLIENT_PIB="pib-sqlite3:$HOME/.ndn" NDN_CLIENT_TPM="tpm-file:$HOME/.ndn/tpm"
ndnsec get-default >/dev/null 2>&1 \
    || ndnsec key-gen /localhost/nfd-start 2>/dev/null | ndnsec cert-install - >/dev/null 2>&1
export NDN_CLIENT_TRANSPORT="unix://$sock"
if [ -S "$sock" ]; then
    if timeout 3 nfdc status >/dev/null 2>&1; then
        echo "nfd-start: an NFD already answers on $sock" >&2
        exit 1
    fi
    rm -f "$sock"
fi
cat > "$dir/nfd.conf" <<CONF
log
{
  default_level WARN
}
tables
{
  cs_max_packets 65536
  cs_policy lru
  cs_unsolicited_policy drop-all
  strategy_choice
  {
    /               /localhost/nfd/strategy/best-route
    /localhost      /localhost/nfd/strategy/multicast
    /localhost/nfd  /localhost/nfd/strategy/best-route
    /ndn/broadcast  /localhost/nfd/strategy/multicast
  }
}
face_system
{
  general
  {
    enable_congestion_marking yes
  }
  unix
  {
    path $sock
  }
  tcp
  {
    listen yes
    port 6363
    enable_v4 yes
    enable_v6 no
  }
  udp
  {
    listen yes
    port 6363
    enable_v4 yes
    enable_v6 no
    mcast no
  }
  ether
  {
    listen no
    mcast no
  }
}
authorizations
{
  authorize
  {
    certfile any
    privileges
    {
      faces
      fib
      cs
      strategy-choice
    }
  }
}
rib
{
  localhost_security
  {
    trust-anchor
    {
      type any
    }
  }
  prefix_announcement_validation
  {
    trust-anchor
    {
      type any
    }
  }
}
CONF
# unshare (without --fork) and sh both exec, so $! is NFD's own PID.
unshare -n -- sh -c 'ip link set lo up && exec "$0" --config "$1"' \
    "$here/prefix/bin/nfd" "$dir/nfd.conf" </dev/null >"$dir/nfd.log" 2>&1 &
pid=$!
for _ in $(seq 150); do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "nfd-start: NFD exited; the end of $dir/nfd.log:" >&2
        tail -n 20 "$dir/nfd.log" >&2
        exit 1
    fi
    [ -S "$sock" ] && timeout 3 nfdc status >/dev/null 2>&1 && break
    sleep 0.1
done
if ! timeout 3 nfdc status >/dev/null 2>&1; then
    echo "nfd-start: NFD did not answer on $sock" >&2
    kill "$pid"
    exit 1
fi
echo "$pid"
EOF
    chmod +x "$OUT/nfd-start"
}

main() {
    install_build_deps
    mkdir -p "$OUT/src" "$PREFIX"
    export PATH="$PREFIX/bin:$PATH"
    export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    # Installed binaries find the installed libraries without LD_LIBRARY_PATH.
    export LDFLAGS="-Wl,-rpath,$PREFIX/lib${LDFLAGS:+ $LDFLAGS}"

    checkout ndn-cxx "$(source_of ndn-cxx NDN_CXX_GIT)" "$NDN_CXX_COMMIT" NDN_CXX_GIT
    checkout NFD "$(source_of NFD NFD_GIT)" "$NFD_COMMIT" NFD_GIT
    checkout ndn-tools "$(source_of ndn-tools NDN_TOOLS_GIT)" "$NDN_TOOLS_COMMIT" NDN_TOOLS_GIT

    # NFD and ndn-tools link ndn-cxx: a different ndn-cxx rebuilds them.
    if [ "$(cat "$PREFIX/.installed-ndn-cxx" 2>/dev/null)" != "$NDN_CXX_COMMIT" ]; then
        rm -f "$PREFIX/.installed-NFD" "$PREFIX/.installed-ndn-tools"
    fi
    waf_install ndn-cxx "$NDN_CXX_COMMIT" "$PREFIX/lib/pkgconfig/libndn-cxx.pc" \
        --libdir="$PREFIX/lib" --enable-shared --disable-static
    waf_install NFD "$NFD_COMMIT" "$PREFIX/bin/nfd" --without-websocket
    waf_install ndn-tools "$NDN_TOOLS_COMMIT" "$PREFIX/bin/ndnget"

    printf 'ndn-cxx %s\nNFD %s\nndn-tools %s\n' \
        "$NDN_CXX_COMMIT" "$NFD_COMMIT" "$NDN_TOOLS_COMMIT" > "$OUT/versions.txt"
    write_env
    write_nfd_start
    say "done: . $OUT/env.sh; NFDPID=\$($OUT/nfd-start)"
}

main "$@"
