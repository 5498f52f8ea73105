//go:build unix

package producer

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
)

// holdIdle is how long a benchmark of held connections watches them idle
// for its CPU figure.
const holdIdle = 10 * time.Second

// holdFiles is the file descriptors the benchmark needs: one per
// connection, and some to spare.
const holdFiles = 12_000

// BenchmarkHeldConnections holds 1,000 and 10,000 logged-in IDLE connections
// and reports what each costs this process: heap (Go heap and goroutine
// stacks in use) and RSS growth per connection once all are up, the CPU of
// setting one up, and the CPU per connection per minute while they idle.
// "idleconn" is the producer's own minimal client (hold.go); "goimap" holds
// go-imap v2 clients in IDLE instead, for comparison. Run one iteration:
//
//	go test ./producer -run '^$' -bench HeldConnections -benchtime 1x
//
// The server is the Dovecot the environment names (deploy/dovecot/start.sh),
// or else `imapload imapserver` built and started as a child process, so
// that the server's memory and CPU stay out of the figures.
func BenchmarkHeldConnections(b *testing.B) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Max < holdFiles {
		b.Skipf("RLIMIT_NOFILE hard limit %d (%v): holding 10,000 connections needs %d file descriptors", lim.Max, err, holdFiles)
	}
	RaiseNoFile(b, holdFiles)
	tg := holdServer(b)
	for _, n := range []int{1000, 10_000} {
		for _, kind := range []string{"idleconn", "goimap"} {
			b.Run(fmt.Sprintf("%s/conns=%d", kind, n), func(b *testing.B) {
				for range b.N {
					measureHold(b, n, func(ctx context.Context, up func()) func() {
						if kind == "goimap" {
							return holdGoIMAP(b, tg, n, up)
						}
						return holdIdleConns(b, ctx, tg, n, up)
					})
				}
			})
		}
	}
}

// measureHold starts n held connections with start (which calls up once per
// connection set up and returns the function that closes them all) and
// reports their cost.
func measureHold(b *testing.B, n int, start func(ctx context.Context, up func()) func()) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heap0, rss0 := memNow()
	u0, s0 := rusage(b)
	var mu sync.Mutex
	held := 0
	stop := start(ctx, func() { mu.Lock(); held++; mu.Unlock() })
	defer stop()
	deadline := time.Now().Add(5 * time.Minute)
	for mu.Lock(); held < n; mu.Lock() {
		mu.Unlock()
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d connections held after 5 min", held, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Unlock()
	u1, s1 := rusage(b)
	heap1, rss1 := memNow()
	time.Sleep(holdIdle)
	u2, s2 := rusage(b)
	per := float64(n)
	b.ReportMetric(float64(heap1-heap0)/per, "heap-B/conn")
	b.ReportMetric(float64(rss1-rss0)/per, "rss-B/conn")
	b.ReportMetric(float64(u1+s1-u0-s0)/per/float64(time.Microsecond), "setup-cpu-µs/conn")
	b.ReportMetric(float64(u2+s2-u1-s1)/per/holdIdle.Minutes()/float64(time.Microsecond), "idle-cpu-µs/conn/min")
	b.ReportMetric(float64(runtime.NumGoroutine())/per, "goroutines/conn")
}

// holdIdleConns holds n connections with the producer's holder, 64 set-ups
// at a time, each then idling on the goroutine that set it up.
func holdIdleConns(b *testing.B, ctx context.Context, tg *benchTarget, n int, up func()) func() {
	h := newHolder(tg.env(b), n, 1)
	hctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for k := range n {
		wg.Go(func() {
			sem <- struct{}{}
			c, err := h.setup(hctx, tg.accts[k%len(tg.accts)])
			<-sem
			if err != nil {
				b.Errorf("set-up %d: %v", k, err)
				return
			}
			up()
			_ = h.keep(hctx, c, "")
		})
	}
	return func() { cancel(); wg.Wait() }
}

// holdGoIMAP holds n go-imap clients in IDLE, 64 set-ups at a time.
func holdGoIMAP(b *testing.B, tg *benchTarget, n int, up func()) func() {
	var mu sync.Mutex
	var clients []*imapclient.Client
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for k := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			acct := tg.accts[k%len(tg.accts)]
			c, err := imapclient.DialInsecure(tg.addr, nil)
			if err != nil {
				b.Errorf("go-imap dial %d: %v", k, err)
				return
			}
			err = c.Login(acct.User, acct.Password).Wait()
			if err == nil {
				_, err = c.Select("INBOX", nil).Wait()
			}
			if err == nil {
				_, err = c.Idle()
			}
			mu.Lock()
			clients = append(clients, c)
			mu.Unlock()
			if err != nil {
				b.Errorf("go-imap set-up %d: %v", k, err)
				return
			}
			up()
		})
	}
	wg.Wait()
	return func() {
		for _, c := range clients {
			c.Close()
		}
	}
}

// memNow is the Go heap and stacks in use after a collection, and the
// process's resident set, in bytes.
func memNow() (heap, rss int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	data, _ := os.ReadFile("/proc/self/statm")
	if f := strings.Fields(string(data)); len(f) > 1 {
		pages, _ := strconv.ParseInt(f[1], 10, 64)
		rss = pages * int64(os.Getpagesize())
	}
	return int64(ms.HeapInuse + ms.StackInuse), rss
}

// holdServer is the Dovecot the environment names, or a child
// `imapload imapserver` with 100 accounts.
func holdServer(b *testing.B) *benchTarget {
	if os.Getenv("IMAPLOAD_DOVECOT_ADDR") != "" {
		return newBenchTarget(b)
	}
	bin := filepath.Join(b.TempDir(), "imapload")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/imapload/imapload/cmd/imapload").CombinedOutput(); err != nil {
		b.Fatalf("go build imapload: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command("sh", "-c", `ulimit -n "$(ulimit -Hn)" && exec "$0" "$@"`, bin, "imapserver", "--listen", addr, "--users", "100", "--log-level", "warn")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("imapload imapserver on %s: not accepting after 30 s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &benchTarget{name: "imapserver", addr: addr, accts: benchAccounts(b, "user", 100, "secret")}
}
