package producer

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPacedFloor is the floor under a running producer's CPU per
// command: a round trip paced like the producer's commands with nothing of
// the producer or go-imap in it — wake on a timer, write one NOOP, wake on
// its reply (net and bufio only, GOMAXPROCS 1). What a FETCH in a step
// costs above this line is go-imap's and the producer's; the line itself is
// Go's runtime and the kernel waking an idle process twice per command.
// Against Dovecot, and with GODEBUG=schedtrace=2147483647 to see the share
// of sysmon's wake-ups (BENCHMARKS.md, "The producer as it runs a step"):
//
//	deploy/dovecot/bench.sh PacedFloor 2000x 3
func BenchmarkPacedFloor(b *testing.B) {
	tg := newBenchTarget(b)
	for _, rate := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("%s/rate=%d/noop", tg.name, rate), func(b *testing.B) { benchPacedNoop(b, tg, rate) })
	}
}

func benchPacedNoop(b *testing.B, tg *benchTarget, rate int) {
	defer withProcs(1)()
	conn, err := net.Dial("tcp", tg.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	acct := tg.accts[0]
	login := "l LOGIN " + strconv.Quote(acct.User) + " " + strconv.Quote(acct.Password) + "\r\n"
	if err := rawCommand(conn, r, []byte(login)); err != nil {
		b.Fatalf("LOGIN: %v", err)
	}
	noop := []byte("l NOOP\r\n")
	gap := time.Second / time.Duration(rate)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var i time.Duration
	start := time.Now()
	measure(b, tg, 1, "cmd", time.Microsecond, func(int) error {
		if wait := time.Until(start.Add(i * gap)); wait > 0 {
			t.Reset(wait)
			<-t.C
		}
		i++
		return rawCommand(conn, r, noop)
	})
}

// rawCommand writes cmd, tagged "l", and reads lines up to its tagged OK.
func rawCommand(conn net.Conn, r *bufio.Reader, cmd []byte) error {
	if _, err := conn.Write(cmd); err != nil {
		return err
	}
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if bytes.HasPrefix(line, []byte("l ")) {
			if !bytes.HasPrefix(line, []byte("l OK")) {
				return fmt.Errorf("%q", line)
			}
			return nil
		}
	}
}
