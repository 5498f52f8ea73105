#!/usr/bin/env bash
# Three imapload ramps with --refine against the private Dovecot, each beside
# imaptest's closed-loop maximum (issue 22; BENCHMARKS.md, "The knee's bracket
# against Dovecot"). Dovecot on CPU 1, the load on CPU 0. As root, after
#   deploy/dovecot/start.sh /tmp/dv 18143 100 secret PLAIN 18993
#   deploy/dovecot/imaptest-build.sh /opt/imaptest
#   go build -o /tmp/imapload ./cmd/imapload
set -u
OUT=${OUT:-/tmp/bracket}; mkdir -p $OUT
ADDR=${ADDR:-127.0.0.1:18143}
HOST=${ADDR%:*} PORT=${ADDR##*:}
IMAPLOAD=${IMAPLOAD:-/tmp/imapload}
IMAPTEST=${IMAPTEST:-/opt/imaptest/bin/imaptest}
for p in $(pgrep -f 'dovecot'); do taskset -a -cp 1 $p >/dev/null 2>&1; done
imaptest_max() { # best sessions/s over clients 4, 8, 16 (LOGIN SELECT FETCH LOGOUT)
  best=0
  for c in 4 8 16; do
    n=$(taskset -c 0 $IMAPTEST host=$HOST port=$PORT user=user%d pass=secret users=100 clients=$c secs=10 - select=100 fetch=100 logout=100 2>&1 | awk '/^Totals:/{t=1;next} t && /^[0-9]+ / && !/%/{print $1; exit}')
    r=$(( n / 10 )); echo "imaptest clients=$c: $n logins in 10 s = $r sessions/s" >&2
    (( r > best )) && best=$r
  done
  echo $best
}
for i in 1 2 3; do
  m=$(imaptest_max); echo "round $i imaptest_max=$m" | tee -a $OUT/summary.txt
  printf 'secret\n' > $OUT/pw.txt
  taskset -c 0 $IMAPLOAD run --imap $ADDR --accounts-password-file $OUT/pw.txt --producers 1 \
    --script "login select fetch logout" --unit sessions --start 100 --refine 3 --step-duration 10s \
    --out $OUT/r$i > $OUT/r$i.out 2> $OUT/r$i.err; rc=$?
  echo "round $i ramp exit=$rc" | tee -a $OUT/summary.txt
  grep -v '^step [0-9]* *[0-9.]*s/' $OUT/r$i.out | grep -E 'done:|^verdict|^knee|^last held|recover|re-offer|ramp stopped' | tee -a $OUT/summary.txt
done
m=$(imaptest_max); echo "final imaptest_max=$m" | tee -a $OUT/summary.txt
