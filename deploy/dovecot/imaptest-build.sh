#!/usr/bin/env bash
# Build Dovecot's own load tester, imaptest, against the Dovecot 2.3 that
# Debian 12 ships (dovecot-dev 2.3.19), and install it under PREFIX.
#
#   deploy/dovecot/imaptest-build.sh PREFIX [SRC]
#
#   PREFIX  install prefix; the binary lands in PREFIX/bin/imaptest
#   SRC     imaptest git repository to clone from (default: the mirror at
#           /work/.mirror/dovecot+imaptest/repo, else github.com/dovecot/imaptest)
#
# Idempotent: if PREFIX/bin/imaptest exists and runs, it does nothing.
# Needs root only to apt-get the build dependencies when they are missing.
#
# Why this commit and patch: imaptest's HEAD follows Dovecot 2.4's API. The last
# commit before the 2.4-only changes (str_begins() with three arguments,
# 2022-03-10, and the lib-ssl-iostream change of 2022-07) is 924f619
# (2022-03-09). Debian's 2.3.19.1+deb12u* backports a security fix that gives
# imap_parser_create() a fourth argument (struct imap_parser_params *), which no
# imaptest commit passes; passing NULL (no list-count limit) is what 2.3.19
# did before the fix.
set -euo pipefail

die() { echo "imaptest-build.sh: $*" >&2; exit 1; }
log() { echo "imaptest-build.sh: $*" >&2; }

[[ $# -ge 1 && -n $1 ]] || die "usage: $0 PREFIX [SRC]"
PREFIX=$1
SRC=${2:-}
COMMIT=924f619
if [[ -z $SRC ]]; then
  SRC=https://github.com/dovecot/imaptest.git
  [[ -d /work/.mirror/dovecot+imaptest/repo ]] && SRC=/work/.mirror/dovecot+imaptest/repo
fi

if [[ -x $PREFIX/bin/imaptest ]] && "$PREFIX/bin/imaptest" --help >/dev/null 2>&1; then
  log "already built: $PREFIX/bin/imaptest"
  exit 0
fi

# 1. Build dependencies (dovecot-dev provides /usr/lib/dovecot/dovecot-config).
need=()
[[ -r /usr/lib/dovecot/dovecot-config && -d /usr/include/dovecot ]] || need+=(dovecot-dev)
for t in autoconf automake libtoolize pkg-config make gcc; do
  command -v "$t" >/dev/null || need+=("$t")
done
if ((${#need[@]})); then
  [[ $(id -u) -eq 0 ]] || die "missing ${need[*]}: run as root, or apt-get install dovecot-dev autoconf automake libtool pkg-config build-essential"
  log "installing build dependencies"
  apt-get install -y dovecot-dev autoconf automake libtool pkg-config build-essential >&2
fi

# 2. Source at the pinned commit, patched for Debian's imap_parser_create().
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$SRC" "$work/imaptest"
cd "$work/imaptest"
git checkout -q "$COMMIT"
sed -i 's/imap_parser_create(\([^;]*\), (size_t)-1)/imap_parser_create(\1, (size_t)-1, NULL)/' \
  src/commands.c src/imap-client.c src/test-parser.c
if grep -q 'size_t max_line_size);' /usr/include/dovecot/imap-parser.h; then
  git checkout -q -- src   # an unpatched 2.3.19: the original three arguments
fi

# 3. Build and install.
log "building imaptest $COMMIT against dovecot-dev $(dpkg-query -W -f='${Version}' dovecot-dev 2>/dev/null || echo '?')"
./autogen.sh >/dev/null 2>&1 || die "autogen.sh failed"
# libdovecot.so lives in /usr/lib/dovecot, off the loader's path: link it with an rpath.
./configure -q --with-dovecot=/usr/lib/dovecot --prefix="$PREFIX" LDFLAGS="-Wl,-rpath,/usr/lib/dovecot" >/dev/null || die "configure failed"
make -s -j"$(nproc)" >/dev/null || die "make failed"
make -s install >/dev/null || die "make install failed"
"$PREFIX/bin/imaptest" --help >/dev/null 2>&1 || die "built binary does not run"
log "installed $PREFIX/bin/imaptest"
