package producer

import (
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/embedded"
)

// OutageNATS is embedded NATS with JetStream that a test shuts down and
// starts again on the same port and store directory, as an operator
// restarting nats-server does. It is exported for the black-box tests.
type OutageNATS struct {
	tb   testing.TB
	opts embedded.NATSOptions

	mu  sync.Mutex
	cur *embedded.NATS // nil while down
}

// StartOutageNATS starts the server on a free loopback port, its store in
// tb's temporary directory; tb's cleanup shuts it down. It does I/O.
func StartOutageNATS(tb testing.TB) *OutageNATS {
	tb.Helper()
	o := &OutageNATS{tb: tb, opts: embedded.NATSOptions{StoreDir: tb.TempDir(), ReadyTimeout: 2 * time.Second}}
	o.Start()
	o.opts.Port = o.cur.Server().Addr().(*net.TCPAddr).Port
	tb.Cleanup(o.Shutdown)
	return o
}

// URL is the server's client URL, the same across restarts.
func (o *OutageNATS) URL() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return "nats://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(o.opts.Port))
}

// Start starts the server (again), retrying for at most 5 s while the port
// is still being released.
func (o *OutageNATS) Start() {
	o.tb.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; {
		o.cur, err = embedded.StartNATS(&o.opts)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		o.tb.Fatalf("embedded.StartNATS(port %d) error = %v", o.opts.Port, err)
	}
}

// Shutdown stops the server and waits until it has stopped; the clients
// start reconnecting.
func (o *OutageNATS) Shutdown() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cur != nil {
		o.cur.Shutdown()
		o.cur = nil
	}
}

// Connect opens a client that reconnects every 50 ms for at most 60 s;
// tb's cleanup closes it.
func (o *OutageNATS) Connect() *nats.Conn {
	o.tb.Helper()
	nc, err := nats.Connect(o.URL(), nats.MaxReconnects(1200), nats.ReconnectWait(50*time.Millisecond),
		nats.ReconnectJitter(0, 0), nats.ReconnectBufSize(8<<20))
	if err != nil {
		o.tb.Fatalf("nats.Connect(%s) error = %v", o.URL(), err)
	}
	o.tb.Cleanup(nc.Close)
	return nc
}

// Restart shuts the server down, keeps it down for outage, starts it again
// and waits, for at most 10 s, until nc has reconnected (nc.IsConnected
// alone may not have seen the outage yet).
func (o *OutageNATS) Restart(nc *nats.Conn, outage time.Duration) {
	o.tb.Helper()
	back := nc.StatusChanged(nats.CONNECTED)
	defer nc.RemoveStatusListener(back)
	o.Shutdown()
	time.Sleep(outage) // the outage itself: the scenario, not a wait for a result
	o.Start()
	select {
	case <-back:
	case <-time.After(10 * time.Second):
		o.tb.Fatalf("NATS client not reconnected within 10 s of the restart")
	}
}

// WaitConnected polls until nc is connected, for at most within.
func WaitConnected(tb testing.TB, nc *nats.Conn, within time.Duration) {
	tb.Helper()
	for deadline := time.Now().Add(within); !nc.IsConnected(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("NATS client not reconnected within %v", within)
		}
	}
}
