#!/usr/bin/env bash
# Start a private Dovecot 2.3 IMAP server on loopback for imapload tests.
#
#   deploy/dovecot/start.sh DIR [PORT] [USERS] [PASSWORD] [SCHEME] [IMAPS_PORT] [METRICS_PORT] [LMTP_PORT]
#
#   DIR         state directory (created); config, logs, users, maildirs live here
#   PORT        cleartext IMAP port on 127.0.0.1 (default 11143); it offers STARTTLS
#               with DIR/cert.pem, and LOGIN and AUTHENTICATE PLAIN
#   USERS       number of accounts user1..userN (default 100)
#   PASSWORD    the password of every account (default "secret")
#   SCHEME      PLAIN (default) or a doveadm pw scheme such as BLF-CRYPT
#               (BLF-CRYPT uses cost $BLF_ROUNDS, default 5)
#   IMAPS_PORT  implicit-TLS IMAP port on 127.0.0.1 (default 11993)
#   METRICS_PORT  Dovecot's OpenMetrics listener (service stats, http) on 127.0.0.1,
#               for `imapload observe`; also read from $METRICS_PORT. "auto" (default)
#               takes the first free port from 11990 up, "off" serves none.
#   LMTP_PORT   Dovecot's LMTP listener on 127.0.0.1 (RFC 2033; needs dovecot-lmtpd), for
#               imapload's deliveries (--lmtp): mail to userN@any.domain lands in userN's
#               INBOX. Also read from $LMTP_PORT. "auto" (default) takes the first free port
#               from 11924 up, or serves none when dovecot-lmtpd is not installed; "off"
#               serves none.
#
# Must run as root (Dovecot drops privileges to vmail/dovenull/dovecot).
# Idempotent: a Dovecot already running from DIR is stopped and restarted with
# the new settings; existing maildirs are kept (only new users get seeded).
# On success, stdout carries only KEY=VALUE lines for the test environment;
# progress and errors go to stderr.
set -euo pipefail

die() { echo "start.sh: $*" >&2; exit 1; }
log() { echo "start.sh: $*" >&2; }

[[ $# -ge 1 && -n "$1" ]] || die "usage: $0 DIR [PORT] [USERS] [PASSWORD] [SCHEME] [IMAPS_PORT] [METRICS_PORT] [LMTP_PORT]"
[[ $(id -u) -eq 0 ]] || die "must run as root"

DIR=$1
PORT=${2:-11143}
USERS=${3:-100}
PASSWORD=${4:-secret}
SCHEME=${5:-PLAIN}
IMAPS_PORT=${6:-11993}
METRICS_PORT=${7:-${METRICS_PORT:-auto}}
LMTP_PORT=${8:-${LMTP_PORT:-auto}}
BLF_ROUNDS=${BLF_ROUNDS:-5}

[[ $PORT =~ ^[0-9]+$ && $PORT -gt 0 && $PORT -lt 65536 ]] || die "bad PORT: $PORT"
[[ $IMAPS_PORT =~ ^[0-9]+$ && $IMAPS_PORT -gt 0 && $IMAPS_PORT -lt 65536 ]] || die "bad IMAPS_PORT: $IMAPS_PORT"
[[ $PORT -ne $IMAPS_PORT ]] || die "PORT and IMAPS_PORT must differ"
if [[ $METRICS_PORT != auto && $METRICS_PORT != off ]]; then
  [[ $METRICS_PORT =~ ^[0-9]+$ && $METRICS_PORT -gt 0 && $METRICS_PORT -lt 65536 ]] || die "bad METRICS_PORT: $METRICS_PORT (a port, auto or off)"
  [[ $METRICS_PORT -ne $PORT && $METRICS_PORT -ne $IMAPS_PORT ]] || die "METRICS_PORT must differ from PORT and IMAPS_PORT"
fi
if [[ $LMTP_PORT != auto && $LMTP_PORT != off ]]; then
  [[ $LMTP_PORT =~ ^[0-9]+$ && $LMTP_PORT -gt 0 && $LMTP_PORT -lt 65536 ]] || die "bad LMTP_PORT: $LMTP_PORT (a port, auto or off)"
  [[ $LMTP_PORT -ne $PORT && $LMTP_PORT -ne $IMAPS_PORT && $LMTP_PORT != "$METRICS_PORT" ]] || die "LMTP_PORT must differ from PORT, IMAPS_PORT and METRICS_PORT"
fi
[[ $USERS =~ ^[0-9]+$ && $USERS -ge 1 ]] || die "bad USERS: $USERS"
[[ -n $PASSWORD && $PASSWORD != *[:[:space:]]* ]] || die "PASSWORD must be non-empty, without ':' or whitespace"
SCHEME=${SCHEME^^}
[[ $SCHEME =~ ^[A-Z0-9_.-]+$ ]] || die "bad SCHEME: $SCHEME"

command -v dovecot >/dev/null || die "dovecot not installed (apt-get install -y dovecot-core dovecot-imapd)"
command -v doveadm >/dev/null || die "doveadm not found"
command -v openssl >/dev/null || die "openssl not found"
# dovecot-lmtpd installs the lmtp binary beside imap's
lmtp_bin=$(dirname "$(dpkg -L dovecot-imapd 2>/dev/null | grep -m1 '/imap$' || echo /usr/lib/dovecot/imap)")/lmtp
if [[ ! -x $lmtp_bin ]]; then
  case $LMTP_PORT in
    off) ;;
    auto) log "dovecot-lmtpd not installed: no LMTP listener (apt-get install -y dovecot-lmtpd)"; LMTP_PORT=off ;;
    *) die "LMTP_PORT $LMTP_PORT: dovecot-lmtpd not installed (apt-get install -y dovecot-lmtpd), or LMTP_PORT=off" ;;
  esac
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMPL=$here/dovecot.conf.tmpl
[[ -r $TMPL ]] || die "template not found: $TMPL"

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd -P)   # absolute, symlink-free: Dovecot needs absolute paths
[[ $DIR != *[[:space:]@\|\&\\]* ]] || die "DIR must not contain whitespace or any of @ | & \\"
CONF=$DIR/dovecot.conf

# tcp_open PORT: true if something accepts connections on 127.0.0.1:PORT
tcp_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}
# imap_greeting PORT: true if 127.0.0.1:PORT answers with an IMAP "* OK" greeting
imap_greeting() {
  timeout 3 bash -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$1"' || exit 1
    IFS= read -r -t 2 line <&3 || exit 1
    printf "a LOGOUT\r\n" >&3 2>/dev/null || true
    [[ $line == "* OK"* ]]' 2>/dev/null
}

# 1. Stop a Dovecot already running from this DIR (so new settings apply).
if [[ -f $DIR/run/master.pid ]] && kill -0 "$(cat "$DIR/run/master.pid")" 2>/dev/null; then
  log "Dovecot already running from $DIR (pid $(cat "$DIR/run/master.pid")); restarting"
  "$here/stop.sh" "$DIR" >&2
fi
for p in "$PORT" "$IMAPS_PORT"; do
  ! tcp_open "$p" || die "127.0.0.1:$p is already in use by another process"
done
if [[ $METRICS_PORT == auto ]]; then
  for ((p = 11990; p < 12090; p++)); do
    [[ $p -eq $PORT || $p -eq $IMAPS_PORT ]] && continue
    tcp_open "$p" || { METRICS_PORT=$p; break; }
  done
  [[ $METRICS_PORT != auto ]] || die "no free METRICS_PORT in 11990-12089; give one, or off"
elif [[ $METRICS_PORT != off ]]; then
  ! tcp_open "$METRICS_PORT" || die "127.0.0.1:$METRICS_PORT is already in use by another process"
fi
if [[ $LMTP_PORT == auto ]]; then
  for ((p = 11924; p < 12024; p++)); do
    [[ $p -eq $PORT || $p -eq $IMAPS_PORT || $p == "$METRICS_PORT" ]] && continue
    tcp_open "$p" || { LMTP_PORT=$p; break; }
  done
  [[ $LMTP_PORT != auto ]] || die "no free LMTP_PORT in 11924-12023; give one, or off"
elif [[ $LMTP_PORT != off ]]; then
  ! tcp_open "$LMTP_PORT" || die "127.0.0.1:$LMTP_PORT is already in use by another process"
fi

# 2. System user that owns the mail.
if ! getent passwd vmail >/dev/null; then
  log "creating system user vmail"
  getent group vmail >/dev/null || groupadd --system vmail
  useradd --system --gid vmail --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin vmail
fi
for u in dovenull dovecot; do
  getent passwd "$u" >/dev/null || die "system user $u missing (it comes with dovecot-core)"
done
VUID=$(id -u vmail)
VGID=$(id -g vmail)

# Dovecot's unprivileged processes must traverse DIR.
chmod 0755 "$DIR"
mkdir -p "$DIR/run" "$DIR/state" "$DIR/mail"

# 3. Self-signed certificate for the imaps listener.
if [[ ! -s $DIR/cert.pem || ! -s $DIR/key.pem ]]; then
  log "creating self-signed certificate"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null || die "openssl failed"
  chmod 0600 "$DIR/key.pem"
  chmod 0644 "$DIR/cert.pem"
fi

# 4. Config from the template.
LOGIN_PROCS=$(nproc 2>/dev/null || echo 2)
[[ $LOGIN_PROCS -ge 2 ]] || LOGIN_PROCS=2
# The statistics block is commented out by "#@METRICS@" line prefixes: removed
# to serve OpenMetrics, kept (comments) with METRICS_PORT=off.
metrics=(-e "s|^#@METRICS@||")
[[ $METRICS_PORT != off ]] || metrics=()
# The LMTP block likewise, by "#@LMTP@" prefixes.
lmtp=(-e "s|^#@LMTP@||")
[[ $LMTP_PORT != off ]] || lmtp=()
sed -e "s|@DIR@|$DIR|g" -e "s|@PORT@|$PORT|g" -e "s|@IMAPS_PORT@|$IMAPS_PORT|g" \
    -e "s|@UID@|$VUID|g" -e "s|@GID@|$VGID|g" -e "s|@LOGIN_PROCS@|$LOGIN_PROCS|g" \
    -e "s|@METRICS_PORT@|$METRICS_PORT|g" -e "s|@LMTP_PORT@|$LMTP_PORT|g" "${metrics[@]}" "${lmtp[@]}" \
    "$TMPL" > "$CONF.tmp"
mv "$CONF.tmp" "$CONF"
doveconf -c "$CONF" -n >/dev/null || die "invalid config $CONF"

# 5. Users: one hash computed once, shared by every account.
if [[ $SCHEME == PLAIN ]]; then
  HASH="{PLAIN}$PASSWORD"
else
  rounds=()
  [[ $SCHEME != BLF-CRYPT ]] || rounds=(-r "$BLF_ROUNDS")
  HASH=$(doveadm -c "$CONF" pw -s "$SCHEME" "${rounds[@]}" -p "$PASSWORD") || die "doveadm pw -s $SCHEME failed"
fi
awk -v n="$USERS" -v h="$HASH" 'BEGIN { for (i = 1; i <= n; i++) printf "user%d:%s\n", i, h }' \
  > "$DIR/users.passwd.tmp"
chown root:dovecot "$DIR/users.passwd.tmp"
chmod 0640 "$DIR/users.passwd.tmp"
mv "$DIR/users.passwd.tmp" "$DIR/users.passwd"

# 6. Maildirs: seed INBOX with two messages for users that have no maildir yet.
msg1=$'Date: Mon, 01 Jan 2024 10:00:00 +0000\nFrom: Alice <alice@example.test>\nTo: user <user@example.test>\nSubject: imapload seed message 1\nMessage-ID: <seed1@imapload.test>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=us-ascii\n\nHello from the imapload seed.\nThis is message one.\n'
msg2=$'Date: Mon, 01 Jan 2024 11:00:00 +0000\nFrom: Bob <bob@example.test>\nTo: user <user@example.test>\nSubject: imapload seed message 2\nMessage-ID: <seed2@imapload.test>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=us-ascii\n\nSecond seed message, a little longer.\nLorem ipsum dolor sit amet, consectetur adipiscing elit.\nSed do eiusmod tempor incididunt ut labore et dolore magna aliqua.\n'
seeded=0
for ((i = 1; i <= USERS; i++)); do
  md=$DIR/mail/user$i
  [[ -e $md ]] && continue
  mkdir "$md.tmp$$" "$md.tmp$$/cur" "$md.tmp$$/new" "$md.tmp$$/tmp"
  printf '%s' "$msg1" > "$md.tmp$$/cur/1704103200.M1P1.imapload,S=${#msg1}:2,"
  printf '%s' "$msg2" > "$md.tmp$$/cur/1704106800.M2P1.imapload,S=${#msg2}:2,"
  mv "$md.tmp$$" "$md"
  seeded=$((seeded + 1))
done
chown -R "$VUID:$VGID" "$DIR/mail"
log "users: $USERS ($SCHEME), newly seeded maildirs: $seeded"

# 7. Start and wait (bounded) for the IMAP greeting.
# Held IDLE connections (a connection ramp) need a descriptor each in the
# imap and login processes: raise the hard limit to 65536 if it is lower
# (root may), then the soft one to it.
if [[ $(ulimit -Hn) != unlimited && $(ulimit -Hn) -lt 65536 ]]; then
  ulimit -Hn 65536 2>/dev/null || log "warning: could not raise the fd hard limit above $(ulimit -Hn)"
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
: > "$DIR/dovecot.log"
dovecot -c "$CONF" || { cat "$DIR/dovecot.log" >&2 || true; die "dovecot failed to start"; }
ok=0
for ((t = 0; t < 100; t++)); do
  if imap_greeting "$PORT"; then ok=1; break; fi
  sleep 0.1
done
if [[ $ok -ne 1 ]]; then
  tail -n 20 "$DIR/dovecot.log" >&2 || true
  "$here/stop.sh" "$DIR" >&2 || true
  die "no IMAP greeting on 127.0.0.1:$PORT within 10 s"
fi
tcp_open "$IMAPS_PORT" || log "warning: imaps port $IMAPS_PORT not accepting connections"
metrics_env=
if [[ $METRICS_PORT != off ]]; then
  tcp_open "$METRICS_PORT" || log "warning: metrics port $METRICS_PORT not accepting connections"
  metrics_env="IMAPLOAD_DOVECOT_METRICS_ADDR=127.0.0.1:$METRICS_PORT"
fi
lmtp_env=
if [[ $LMTP_PORT != off ]]; then
  lmtp_ok=0
  for ((t = 0; t < 50; t++)); do
    if tcp_open "$LMTP_PORT"; then lmtp_ok=1; break; fi
    sleep 0.1
  done
  [[ $lmtp_ok -eq 1 ]] || log "warning: LMTP port $LMTP_PORT not accepting connections"
  lmtp_env="IMAPLOAD_DOVECOT_LMTP_ADDR=127.0.0.1:$LMTP_PORT"
fi
log "Dovecot $(dovecot --version | cut -d' ' -f1) running from $DIR (pid $(cat "$DIR/run/master.pid")), log $DIR/dovecot.log"

cat <<ENV
IMAPLOAD_DOVECOT_ADDR=127.0.0.1:$PORT
IMAPLOAD_DOVECOT_TLS_ADDR=127.0.0.1:$IMAPS_PORT
IMAPLOAD_DOVECOT_USERS=$USERS
IMAPLOAD_DOVECOT_USER_PREFIX=user
IMAPLOAD_DOVECOT_PASSWORD=$PASSWORD
IMAPLOAD_DOVECOT_SCHEME=$SCHEME
IMAPLOAD_DOVECOT_DIR=$DIR
ENV
[[ -z $metrics_env ]] || echo "$metrics_env"
[[ -z $lmtp_env ]] || echo "$lmtp_env"
