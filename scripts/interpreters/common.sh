# Shared by scripts/interpreters/setup and scripts/interpreters/run (sourced, not run).
# shellcheck shell=bash

MATRIX_CACHE="${KASSIGN_CACHE:-$HOME/.cache/kassign}/interpreters"
PYENV_ROOT="${PYENV_ROOT:-$HOME/.pyenv}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# Where the project's tree, the run's work directory and a wheelhouse appear inside the chroot
# (bind mounts made for one command, in a private mount namespace: nothing stays mounted).
CHROOT_SRC=/opt/kassign-src
CHROOT_WORK=/opt/kassign-work
CHROOT_WHEELS=/opt/kassign-wheels

# The interpreters of the matrix (KASSIGN_INTERPRETERS narrows them). CPython 3.11, the suite's own,
# runs the whole suite in the project's .venv (`make test`); here it gets a venv with the wheel alone,
# for the digest every other interpreter is compared with (scripts/interpreters/digest.py).
MATRIX_VERSIONS="3.10 3.12 3.13 3.14 3.15"
REFERENCE_VERSION=3.11
matrix_versions() {
    local v
    for v in ${KASSIGN_INTERPRETERS:-$MATRIX_VERSIONS}; do
        case " $MATRIX_VERSIONS " in
            *" $v "*) echo "$v" ;;
            *) echo "interpreters: unknown interpreter $v (known: $MATRIX_VERSIONS)" >&2; return 1 ;;
        esac
    done
}

# pyenv (the host) or sid (the Debian chroot).
where_of() {
    case "$1" in
        3.14 | 3.15) echo sid ;;
        *) echo pyenv ;;
    esac
}

# The newest pyenv CPython $1.x (a GIL build), or fail.
pyenv_python() {
    local d
    d="$(find "$PYENV_ROOT/versions" -maxdepth 1 -name "$1.*" 2>/dev/null | grep -E "/$1\.[0-9]+$" | sort -V | tail -n 1)"
    [ -n "$d" ] && [ -x "$d/bin/python$1" ] && echo "$d/bin/python$1"
}

# CPython $REFERENCE_VERSION: pyenv's, else python3.11 on PATH, or fail.
reference_python() {
    pyenv_python "$REFERENCE_VERSION" || command -v "python$REFERENCE_VERSION"
}

# The venv of interpreter $1, as seen from the host.
env_dir() {
    case "$(where_of "$1")" in
        sid) echo "$MATRIX_CACHE/sid/opt/kassign-venvs/$1" ;;
        *) echo "$MATRIX_CACHE/venvs/$1" ;;
    esac
}

# in_chroot ROOT [HOST_DIR INSIDE_DIR]... -- COMMAND...
# Runs COMMAND chrooted into ROOT with /dev and /proc bound in, and each HOST_DIR bound at
# INSIDE_DIR, in a private mount namespace (the mounts vanish with the command).
in_chroot() {
    local root=$1
    shift
    local binds=()
    while [ "$1" != "--" ]; do
        binds+=("$1" "$2")
        shift 2
    done
    shift
    unshare --mount --propagation private -- /bin/sh -c '
        set -e
        root=$1; n=$2; shift 2
        mount --rbind /dev "$root/dev"
        mount --bind /proc "$root/proc"
        while [ "$n" -gt 0 ]; do
            mkdir -p "$root$2"
            mount --bind "$1" "$root$2"
            shift 2; n=$((n - 1))
        done
        exec chroot "$root" "$@"
    ' in_chroot "$root" "$((${#binds[@]} / 2))" "${binds[@]}" "$@"
}
