#!/usr/bin/env bash
# The producer as it really runs (issue 15): real steps through imapload's own
# processes — nats, aggregator, one producer (pacer, dispatcher, sessions,
# recorder, publisher) — against a private Dovecot and against the embedded
# server without a capacity limit, with Dovecot's imaptest beside it on the same
# Dovecot. CPU comes from /proc/<pid>/stat (utime+stime; Dovecot is its master
# plus its live children plus what its dead children left in cutime+cstime).
#
#   deploy/dovecot/runbench.sh [OUT]        (as root: it starts Dovecot)
#
# Prints one tab-separated line per measurement (and writes them to
# OUT/runbench.tsv, default /tmp/imapload-runbench):
#   tool server shape target/s delivered/s ratio sessions/s lagP99ms
#   prodCPU_us/cmd prodCPU_us/session srvCPU_us/cmd prod/srv other_cores load1
# "other_cores" is the CPU the rest of the host used meanwhile, in cores
# (/proc/stat busy time minus the processes measured here): the machine is
# shared, so read each figure beside it.
#
# Environment (defaults in brackets):
#   RATES      commands/s of each step ["100 1000 10000"]
#   SHAPES     script (login select fetch logout at RATE/3 sessions/s) and/or
#              fetch (FETCH on persistent sessions) ["script fetch"]
#   SERVERS    dovecot and/or embedded ["dovecot embedded"]
#   REPEAT     rounds; each round alternates imapload and imaptest [2]
#   DURATION   measurement window of a step [10s]; WARMUP [2s]
#   SESSIONS   producer --sessions [64]
#   CLIENTS    imaptest clients= (closed loop: it runs as fast as they go) [4]
#   PAIRED     1: each round against Dovecot starts with imaptest, then an
#              imapload script step at the session rate imaptest reached, and
#              prints the ratio of their CPU per session [1]
#   IMAPLOAD_BIN  a prebuilt imapload binary (default: go build of this tree)
#   IMAPTEST   imaptest binary (default: built by imaptest-build.sh under OUT)
#   PIN        1: producer and imaptest on CPU 0, servers, NATS and the
#              aggregator on the last CPU [1]
#   PORTS      base port: Dovecot BASE (IMAPS BASE+850), embedded BASE+1,
#              NATS BASE+279 [16143]
#   DOVE_DIR   Dovecot state directory [OUT/dovecot]
#   PRODUCER_FLAGS  extra flags for the producer (e.g. --cpuprofile=FILE)
#   PRODUCER_ENV    extra environment of the producer only (e.g. GOGC=400)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

OUT=${1:-/tmp/imapload-runbench}
RATES=${RATES:-100 1000 10000}
SHAPES=${SHAPES:-script fetch}
SERVERS=${SERVERS:-dovecot embedded}
REPEAT=${REPEAT:-2}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
SESSIONS=${SESSIONS:-64}
CLIENTS=${CLIENTS:-4}
PAIRED=${PAIRED:-1}
PIN=${PIN:-1}
BASE=${PORTS:-16143}
DOVE_PORT=$BASE EMB_PORT=$((BASE + 1)) NATS_PORT=$((BASE + 279))
NATS=nats://127.0.0.1:$NATS_PORT
DOVE_DIR=${DOVE_DIR:-$OUT/dovecot}
HZ=$(getconf CLK_TCK)
last=$(($(nproc) - 1))

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd -P)
DOVE_DIR=${DOVE_DIR:-$OUT/dovecot}
log() { echo "runbench: $*" >&2; }
for t in jq nats taskset go; do   # nats: the NATS CLI (github.com/nats-io/natscli), to read step results
  command -v "$t" >/dev/null || { log "$t not found"; exit 1; }
done
[[ $(id -u) -eq 0 ]] || { log "must run as root (it starts Dovecot)"; exit 1; }
secs() { local d=$1; d=${d%s}; echo "$d"; }   # "10s" -> 10 (whole seconds only)
pin() { # pin WHICH CMD...: exec CMD, WHICH is "gen" (CPU 0) or "srv" (the last CPU).
  # Always called in a subshell ($(...) or &), which it replaces: $! is CMD's pid.
  local w=$1; shift
  if [[ $PIN == 1 ]]; then
    if [[ $w == gen ]]; then exec taskset -c 0 "$@"; else exec taskset -c "$last" "$@"; fi
  else exec "$@"; fi
}

# --- CPU readings (clock ticks) -------------------------------------------
pid_cpu() { # utime+stime of one live process, 0 if gone
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
  s=${s##*) }            # fields from 3 on; comm may hold spaces
  set -- $s
  echo $((${12} + ${13}))
}
tree_cpu() { # a master, its live children, and its reaped children (cutime+cstime)
  local m=$1 s total kid
  s=$(cat "/proc/$m/stat" 2>/dev/null) || { echo 0; return; }
  s=${s##*) }; set -- $s
  total=$((${12} + ${13} + ${14} + ${15}))
  for kid in $(ps --ppid "$m" -o pid= 2>/dev/null); do
    total=$((total + $(pid_cpu "$kid")))
  done
  echo "$total"
}
host_busy() { # busy ticks of the whole host
  local _ u n s i w q sq st
  read -r _ u n s i w q sq st _ < /proc/stat
  echo $((u + n + s + q + sq + st))
}

# --- processes ------------------------------------------------------------
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -f $DOVE_DIR/run/master.pid ]] && deploy/dovecot/stop.sh "$DOVE_DIR" >&2 || true
}
trap cleanup EXIT

BIN=${IMAPLOAD_BIN:-}
if [[ -z $BIN ]]; then
  BIN=$OUT/imapload
  log "building $BIN"
  go build -o "$BIN" ./cmd/imapload
fi
IMAPTEST=${IMAPTEST:-}
if [[ -z $IMAPTEST ]]; then
  if deploy/dovecot/imaptest-build.sh "$OUT/imaptest" >&2; then IMAPTEST=$OUT/imaptest/bin/imaptest
  else log "imaptest could not be built: runs without it"; fi
fi

eval "$(pin srv deploy/dovecot/start.sh "$DOVE_DIR" "$DOVE_PORT" 100 secret PLAIN $((DOVE_PORT + 850)))"
DOVE_PID=$(cat "$DOVE_DIR/run/master.pid")
pin srv "$BIN" nats --listen "127.0.0.1:$NATS_PORT" --store "$OUT/js" --log-level warn >"$OUT/nats.log" 2>&1 &
pids+=($!)
pin srv "$BIN" imapserver --listen "127.0.0.1:$EMB_PORT" --users 100 --log-level warn >"$OUT/imapserver.log" 2>&1 &
EMB_PID=$!
pids+=($!)
sleep 1
pin srv "$BIN" aggregator --nats "$NATS" --log-level warn >"$OUT/aggregator.log" 2>&1 &
pids+=($!)

PROD_PID=
start_producer() { # start_producer ADDR
  # shellcheck disable=SC2086
  pin gen env ${PRODUCER_ENV:-} "$BIN" producer --nats "$NATS" --imap "$1" --id runbench --sessions "$SESSIONS" \
    --log-level warn ${PRODUCER_FLAGS:-} >>"$OUT/producer.log" 2>&1 &
  PROD_PID=$!
  pids+=($!)
  sleep 2
}
stop_producer() {
  kill -INT "$PROD_PID" 2>/dev/null || true
  wait "$PROD_PID" 2>/dev/null || true
  sleep 1   # its registration is gone before the next producer's step
}

RUN=rb$(date +%s)
STEP=0
result() { # result STEP: the step's result JSON, waiting for it (bounded)
  local i
  for i in $(seq 60); do
    if nats -s "$NATS" stream get IMAPLOAD_RESULTS --last-for "imapload.results.$RUN" -j 2>/dev/null |
      jq -r .data | base64 -d | jq -ce "select(.step == $1)" 2>/dev/null; then return; fi
    sleep 1
  done
  echo '{}'
}

# measure_step SERVER SHAPE RATE [SESSION_RATE]: one imapload step; prints
# its line and keeps it in LAST. Shape script offers RATE/3 sessions/s (each
# session is 3 scheduled commands after its LOGIN), or SESSION_RATE if given.
measure_step() {
  local server=$1 shape=$2 rate=$3 srate=${4:-} args c0 c1 s0 s1 h0 h1 o0 o1 r w d
  STEP=$((STEP + 1))
  if [[ $shape == script ]]; then
    [[ -n $srate ]] || srate=$(awk -v r="$rate" 'BEGIN{printf "%.4f", r/3}')
    args=(--script "login select fetch logout" --session-rate "$srate")
  else
    args=(--mix fetch=1 --rate "$rate")
  fi
  w=$(secs "$WARMUP") d=$(secs "$DURATION")
  "$BIN" step --nats "$NATS" --run "$RUN" --step "$STEP" --duration "$DURATION" --warmup "$WARMUP" \
    --stagger 1s --wait 0 "${args[@]}" >/dev/null
  sleep "$w"
  c0=$(pid_cpu "$PROD_PID"); s0=$(srv_cpu "$server"); h0=$(host_busy); o0=$(others_cpu)
  sleep "$d"
  c1=$(pid_cpu "$PROD_PID"); s1=$(srv_cpu "$server"); h1=$(host_busy); o1=$(others_cpu)
  r=$(result "$STEP")
  LAST=$(jq -r --arg tool imapload --arg server "$server" --arg shape "$shape" --argjson d "$d" --argjson hz "$HZ" \
    --argjson pc $((c1 - c0)) --argjson sc $((s1 - s0)) --argjson other $(((h1 - h0) - (c1 - c0) - (s1 - s0) - (o1 - o0))) \
    --arg load "$(cut -d' ' -f1 /proc/loadavg)" '
    (.delivered_rate * $d) as $cmds | ((.session_rate // 0) * $d) as $sess |
    [$tool, $server, $shape, .target_rate, (.delivered_rate*10|round/10), (.ratio*1000|round/1000), ((.session_rate // 0)*10|round/10),
     .health.lag_p99_max,
     (if $cmds > 0 then ($pc / $hz * 1e6 / $cmds | round) else "-" end),
     (if $sess > 0 then ($pc / $hz * 1e6 / $sess | round) else "-" end),
     (if $cmds > 0 then ($sc / $hz * 1e6 / $cmds | round) else "-" end),
     (if $sc > 0 then ($pc / $sc * 100 | round / 100) else "-" end),
     ($other / $hz / $d * 100 | round / 100), $load] | @tsv' <<<"$r")
  echo "$LAST" | tee -a "$OUT/runbench.tsv"
}
srv_cpu() { if [[ $1 == dovecot ]]; then tree_cpu "$DOVE_PID"; else pid_cpu "$EMB_PID"; fi; }
others_cpu() { # NATS and the aggregator: ours, but neither producer nor server
  local t=0 p
  for p in "${pids[@]}"; do
    [[ $p == "$PROD_PID" || $p == "$EMB_PID" ]] || t=$((t + $(pid_cpu "$p")))
  done
  echo "$t"
}

# measure_imaptest: imaptest's login/select/fetch/logout sessions against
# Dovecot for DURATION; CPU from its shell's cutime+cstime once it exited.
measure_imaptest() {
  [[ -n $IMAPTEST ]] || return 0
  local d s0 s1 h0 h1 o0 o1 out cpu logins
  d=$(secs "$DURATION")
  s0=$(tree_cpu "$DOVE_PID"); h0=$(host_busy); o0=$(others_cpu)
  out=$(pin gen bash -c '"$@" >"'"$OUT"'/imaptest.out" 2>&1; s=$(cat /proc/$$/stat); s=${s##*) }; set -- $s; echo $((${14} + ${15}))' _ \
    "$IMAPTEST" host=127.0.0.1 port="$DOVE_PORT" user=user%d users=100 pass=secret \
    - fetch=100 logout=100 clients="$CLIENTS" secs="$d")
  s1=$(tree_cpu "$DOVE_PID"); h1=$(host_busy); o1=$(others_cpu)
  cpu=$out
  logins=$(awk '/^Totals:/ {t=1; next} t && $1 ~ /^[0-9]+$/ {print $1; exit}' "$OUT/imaptest.out")
  [[ -n $logins && $logins -gt 0 ]] || { log "imaptest: no sessions (see $OUT/imaptest.out)"; return 0; }
  # imaptest runs about d+1 s (start-up and the last second); its rate is over d.
  LAST=$(awk -v l="$logins" -v d="$d" -v c="$cpu" -v s=$((s1 - s0)) -v hz="$HZ" \
    -v other=$(((h1 - h0) - cpu - (s1 - s0) - (o1 - o0))) -v load="$(cut -d' ' -f1 /proc/loadavg)" \
    -v cl="$CLIENTS" 'BEGIN {
      printf "imaptest\tdovecot\tclients=%d\t-\t%.1f\t-\t%.1f\t-\t%d\t%d\t%d\t%.2f\t%.2f\t%s\n",
        cl, l * 3 / d, l / d, c / hz * 1e6 / (l * 3), c / hz * 1e6 / l, s / hz * 1e6 / (l * 3), c / s, other / hz / (d + 1), load
    }')
  echo "$LAST" | tee -a "$OUT/runbench.tsv"
}

# measure_paired: imaptest, then imapload's script at the session rate imaptest
# reached, so that the two pay the same per-session overheads; prints the ratio
# of their CPU per session.
measure_paired() {
  [[ -n $IMAPTEST ]] || return 0
  local it ours
  LAST=
  measure_imaptest
  [[ -n $LAST ]] || return 0
  it=$LAST
  measure_step dovecot script 0 "$(cut -f7 <<<"$it")"
  ours=$LAST
  awk -F'\t' -v a="$(cut -f10 <<<"$ours")" -v b="$(cut -f10 <<<"$it")" -v r="$(cut -f7 <<<"$it")" \
    'BEGIN { if (a > 0 && b > 0) printf "paired\tdovecot\t%.0f sessions/s\timapload/imaptest CPU per session = %.2f\n", r, a / b }' |
    tee -a "$OUT/runbench.tsv"
}

log "host: $(nproc) CPUs, $(uptime)"
printf 'tool\tserver\tshape\ttarget/s\tdelivered/s\tratio\tsessions/s\tlagP99ms\tprod_us/cmd\tprod_us/session\tsrv_us/cmd\tprod/srv\tother_cores\tload1\n' |
  tee "$OUT/runbench.tsv"
for server in $SERVERS; do
  if [[ $server == dovecot ]]; then start_producer "127.0.0.1:$DOVE_PORT"; else start_producer "127.0.0.1:$EMB_PORT"; fi
  for round in $(seq "$REPEAT"); do
    if [[ $server == dovecot && $PAIRED == 1 ]]; then measure_paired; fi
    for rate in $RATES; do
      for shape in $SHAPES; do
        measure_step "$server" "$shape" "$rate"
      done
    done
  done
  stop_producer
done
log "done: $OUT/runbench.tsv; $(uptime)"
