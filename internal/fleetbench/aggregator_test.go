package fleetbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/aggregator"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// The aggregator runs in a process of its own, this test binary started
// again with aggregatorEnv set (the os/exec helper-process pattern), so that
// its memory is its own: the NATS server and the simulated producers live in
// the benchmark's process.
const (
	aggregatorEnv  = "IMAPLOAD_FLEETBENCH_AGGREGATOR" // the NATS URL the helper process connects to
	aggregatorLife = 30 * time.Minute                 // the helper never outlives a benchmark by more
	heapEvery      = 10 * time.Millisecond            // how often the helper samples its heap
)

func TestMain(m *testing.M) {
	if url := os.Getenv(aggregatorEnv); url != "" {
		os.Exit(aggregatorMain(url))
	}
	os.Exit(m.Run())
}

// aggregatorMain runs the real aggregator (aggregator.New + Run, defaults)
// until its standard input closes, then prints the peak of its Go heap in
// use. It returns the exit code.
func aggregatorMain(url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), aggregatorLife)
	defer cancel()
	go func() { // the parent closes stdin to stop us, or dies
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	nc, err := nats.Connect(url, nats.Name("fleetbench-aggregator"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench aggregator:", err)
		return 1
	}
	defer nc.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := aggregator.New(nc, &aggregator.Options{Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench aggregator:", err)
		return 1
	}
	var peak heapPeak
	var wg sync.WaitGroup
	wg.Go(func() { peak.watch(ctx) })
	err = a.Run(ctx)
	cancel()
	wg.Wait()
	fmt.Printf("peak-heap-inuse %d\n", peak.max)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench aggregator:", err)
		return 1
	}
	return 0
}

// heapPeak is the largest Go heap in use (runtime.MemStats.HeapInuse:
// objects and the unused part of their spans) seen while watching.
type heapPeak struct{ max uint64 }

func (h *heapPeak) watch(ctx context.Context) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	t := time.NewTicker(heapEvery)
	defer t.Stop()
	for {
		metrics.Read(s)
		h.max = max(h.max, s[0].Value.Uint64()+s[1].Value.Uint64())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// aggProc is the aggregator's helper process.
type aggProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout bytes.Buffer
	stderr bytes.Buffer
	once   sync.Once
	heap   uint64 // peak Go heap in use, read at stop
}

// startAggregator starts the aggregator's process on the NATS server at url
// and waits until its durable consumer exists; tb's cleanup stops it.
func startAggregator(tb testing.TB, url string, js jetstream.JetStream) *aggProc {
	tb.Helper()
	a := &aggProc{cmd: exec.Command(os.Args[0], "-test.run=^$")}
	a.cmd.Env = append(os.Environ(), aggregatorEnv+"="+url)
	a.cmd.Stdout, a.cmd.Stderr = &a.stdout, &a.stderr
	var err error
	if a.stdin, err = a.cmd.StdinPipe(); err != nil {
		tb.Fatalf("aggregator process: %v", err)
	}
	if err := a.cmd.Start(); err != nil {
		tb.Fatalf("aggregator process: start: %v", err)
	}
	tb.Cleanup(func() { a.stop(tb) })
	testkit.WaitFor(tb, 30*time.Second, "the aggregator's durable consumer", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := js.Consumer(ctx, messages.SamplesStream, "imapload-aggregator")
		return err == nil
	})
	return a
}

// stop closes the process's input, which ends its Run, and waits for it
// (killing it after 10 s); it reads the peak heap the process printed.
func (a *aggProc) stop(tb testing.TB) {
	tb.Helper()
	a.once.Do(func() {
		a.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- a.cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			_ = a.cmd.Process.Kill()
			err = fmt.Errorf("killed after 10 s: %v", <-done)
		}
		if err != nil {
			tb.Errorf("aggregator process: %v\n%s", err, a.stderr.Bytes())
		}
		if f := strings.Fields(a.stdout.String()); len(f) == 2 && f[0] == "peak-heap-inuse" {
			a.heap, _ = strconv.ParseUint(f[1], 10, 64)
		}
	})
}

// memory returns the process's peak and current resident set (VmHWM,
// VmRSS), in bytes, from /proc.
func (a *aggProc) memory() (hwm, rss uint64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", a.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), ":")
		kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch name {
		case "VmHWM":
			hwm = kb << 10
		case "VmRSS":
			rss = kb << 10
		}
	}
	if hwm == 0 {
		return 0, 0, fmt.Errorf("no VmHWM in /proc/%d/status", a.cmd.Process.Pid)
	}
	return hwm, rss, sc.Err()
}
