# Shared by the scripts/bench-*.sh that drive a release namewayd (sourced, not run):
#   bench_init            build namewayd and nameway (release; NAMEWAY_NO_BUILD=1 skips it), make $dir, clean up at exit
#   start_namewayd TOML   start namewayd ($NAMEWAY_BIN, default target/release/namewayd) on
#                         "[log] level=warn" + TOML, wait for $dir/nfd.sock; sets $pid
#   stop_namewayd         stop it
#   median N...           the median of numbers
#   bench_build_ctl       build namewayd, nameway and namewayctl in $PROFILE (debug or
#                         release; release without LTO, 16 codegen units), at low priority
# The TOML should put the Unix socket at $dir/nfd.sock.

bench_init() {
    repo="$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)"
    cd "$repo"
    [ -n "${NAMEWAY_NO_BUILD:-}" ] || cargo build --release -q -p namewayd -p nameway
    dir="$(mktemp -d)"
    pid=0
    # pid 0 would signal the whole process group (this shell too): only a started daemon's.
    trap 'if [ "$pid" != 0 ]; then kill "$pid" 2>/dev/null; fi; kill ${bench_pids:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
}

start_namewayd() {
    rm -f "$dir/nfd.sock"
    printf '[log]\nlevel = "warn"\n%s\n' "$1" > "$dir/d.toml"
    "${NAMEWAY_BIN:-target/release/namewayd}" -c "$dir/d.toml" 2>"$dir/log" &
    pid=$!
    for _ in $(seq 200); do [ -S "$dir/nfd.sock" ] && return 0; sleep 0.05; done
    echo "namewayd did not start:" >&2
    cat "$dir/log" >&2
    return 1
}

stop_namewayd() {
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=0
}

median() {
    printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}

bench_build_ctl() {
    if [ "${PROFILE:-debug}" = release ]; then
        CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
            nice -n 10 cargo build --quiet --release -p namewayd -p nameway -p nameway-ctl
    else
        nice -n 10 cargo build --quiet -p namewayd -p nameway -p nameway-ctl
    fi
}
