#!/bin/sh
# The sandbox image's entrypoint: checks the worker's key file, then replaces itself with
# `kaja sandbox serve`, its flags taken from the environment (see docker/README.md):
#   KAJA_LISTEN         HOST:PORT to listen on (default 0.0.0.0:8080)
#   KAJA_KEY_FILE       the worker's key (default /run/secrets/kaja-key), mode 600 or 400
#   KAJA_SHARED         1 for a shared worker (--shared), 0 or unset otherwise
#   KAJA_IDLE           seconds a server may sit idle before it is stopped (--idle)
#   KAJA_MEMORY         memory limit per server, such as 512M (--memory)
#   KAJA_PIDS           process limit per server (--pids)
#   KAJA_ALLOW_PRIVATE  private ranges servers may reach, comma-separated CIDRs (--allow-private)
#   KAJA_BIN            the kaja program (default /usr/local/bin/kaja)
# Arguments given to the container come after these flags, unchanged.
set -eu

die() {
  printf 'kaja-entrypoint: %s\n' "$1" >&2
  exit 2
}

kaja=${KAJA_BIN:-/usr/local/bin/kaja}
listen=${KAJA_LISTEN:-0.0.0.0:8080}
key_file=${KAJA_KEY_FILE:-/run/secrets/kaja-key}

[ -x "$kaja" ] || die "cannot run $kaja; set KAJA_BIN to the kaja program"

# The worker checks the key file too; checking here first gives the operator the reason
# before anything listens, in the container's own terms.
if [ ! -e "$key_file" ]; then
  die "the key file $key_file does not exist; mount the worker's key there (make one with: head -c 32 /dev/urandom > kaja-key) or set KAJA_KEY_FILE"
fi
[ -f "$key_file" ] || die "the key file $key_file is not a regular file; mount the key as a file"
[ -r "$key_file" ] || die "the key file $key_file cannot be read by uid $(id -u); make it owned by that uid with mode 600"
# Characters 5 to 10 of `ls -l` are the group's and others' permissions; only the mode
# column is read, so the file's name cannot confuse it.
# shellcheck disable=SC2012
mode=$(ls -lLd -- "$key_file" | cut -c1-10)
case $mode in
  ????------) ;;
  *) die "the key file $key_file can be read or written by others (mode $mode); make it mode 600 or 400, owned by uid $(id -u)" ;;
esac

case ${KAJA_SHARED:-0} in
  0 | "") shared=0 ;;
  1) shared=1 ;;
  *) die "KAJA_SHARED is \"$KAJA_SHARED\"; set it to 1 for a shared worker or 0 for a private one" ;;
esac

# The caller's arguments are moved behind ours below, so remember how many there were.
count=$#
set -- "$@" sandbox serve --listen "$listen" --key-file "$key_file"
if [ "$shared" = 1 ]; then set -- "$@" --shared; fi
if [ -n "${KAJA_IDLE:-}" ]; then set -- "$@" --idle "$KAJA_IDLE"; fi
if [ -n "${KAJA_MEMORY:-}" ]; then set -- "$@" --memory "$KAJA_MEMORY"; fi
if [ -n "${KAJA_PIDS:-}" ]; then set -- "$@" --pids "$KAJA_PIDS"; fi
if [ -n "${KAJA_ALLOW_PRIVATE:-}" ]; then
  # Split on commas and blanks, without expanding globs; empty items are skipped.
  set -f
  saved_ifs=$IFS
  IFS=', '
  for cidr in $KAJA_ALLOW_PRIVATE; do
    if [ -n "$cidr" ]; then set -- "$@" --allow-private "$cidr"; fi
  done
  IFS=$saved_ifs
  set +f
fi
while [ "$count" -gt 0 ]; do
  set -- "$@" "$1"
  shift
  count=$((count - 1))
done

exec "$kaja" "$@"
