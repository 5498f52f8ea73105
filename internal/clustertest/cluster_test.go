package clustertest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

// size is the number of nodes: the smallest cluster that keeps a majority of
// its replicas with one node gone.
const size = 3

// node is one nats-server of the cluster; its name, store and ports stay
// the same across a restart.
type node struct {
	name       string
	store      string
	clientPort int // -1 at first start; the port it got afterwards
	listen     string
	srv        *embedded.NATS // nil while it is down
}

// cluster is three in-process nodes on 127.0.0.1 with the same routes.
type cluster struct {
	t      *testing.T
	nodes  []*node
	routes []string
}

// startCluster starts the three nodes and waits until JetStream has a meta
// leader; t's cleanup shuts down whichever are up. The cluster ports are
// picked free first, since every node's routes name all three.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t}
	for i, port := range freePorts(t, size) {
		listen := fmt.Sprintf("127.0.0.1:%d", port)
		c.routes = append(c.routes, "nats-route://"+listen)
		c.nodes = append(c.nodes, &node{name: fmt.Sprintf("n%d", i+1), store: t.TempDir(), clientPort: -1, listen: listen})
	}
	for i := range c.nodes {
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.shutdown(i)
		}
	})
	testkit.WaitFor(t, 30*time.Second, "a JetStream meta leader", func() bool {
		for _, n := range c.nodes {
			if n.srv.Server().JetStreamIsLeader() {
				return true
			}
		}
		return false
	})
	return c
}

// freePorts returns n ports free on 127.0.0.1 at once (held together, so
// they differ), for the cluster listeners.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("net.Listen() error = %v", err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// start starts node i (again) with its name, store and ports.
func (c *cluster) start(i int) {
	c.t.Helper()
	n := c.nodes[i]
	srv, err := embedded.StartNATS(&embedded.NATSOptions{Name: n.name, StoreDir: n.store, Port: n.clientPort,
		ClusterName: "imapload-test", ClusterListen: n.listen, Routes: c.routes})
	if err != nil {
		c.t.Fatalf("StartNATS(%s) error = %v", n.name, err)
	}
	n.srv = srv
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.ClientURL(), "nats://"))
	fmt.Sscan(port, &n.clientPort)
}

// shutdown stops node i if it is up. In-process, this is Server.Shutdown:
// the node's client and route connections close at once (as the kernel
// closes a killed process's sockets), its Raft groups stop without handing
// on their leadership (lame-duck mode would), but unlike SIGKILL its file
// store is flushed and closed; cmd/imapload's TestClusterNATSProcesses
// SIGKILLs real processes.
func (c *cluster) shutdown(i int) {
	if n := c.nodes[i]; n.srv != nil {
		n.srv.Shutdown()
		n.srv = nil
	}
}

// urls lists every node's client URL, as a fleet is given them.
func (c *cluster) urls() string {
	var urls []string
	for _, n := range c.nodes {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.clientPort))
	}
	return strings.Join(urls, ",")
}

// connect connects to the cluster, first trying node first (so that the
// test knows which clients the shutdown of that node cuts off), and
// reconnecting for as long as the test runs.
func (c *cluster) connect(first int) *nats.Conn {
	c.t.Helper()
	urls := strings.Split(c.urls(), ",")
	urls[0], urls[first] = urls[first], urls[0]
	nc, err := nats.Connect(strings.Join(urls, ","), nats.DontRandomize(), nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond), nats.ReconnectJitter(0, 0))
	if err != nil {
		c.t.Fatalf("nats.Connect(%v) error = %v", urls, err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// index returns the index of the node named name, or -1.
func (c *cluster) index(name string) int {
	for i, n := range c.nodes {
		if n.name == name {
			return i
		}
	}
	return -1
}

// streamLeader returns the index of stream's leader node.
func (c *cluster) streamLeader(js jetstream.JetStream, stream string) int {
	c.t.Helper()
	var leader int
	testkit.WaitFor(c.t, 30*time.Second, stream+" to have a leader", func() bool {
		info := streamInfo(js, stream)
		leader = -1
		if info != nil && info.Cluster != nil {
			leader = c.index(info.Cluster.Leader)
		}
		return leader >= 0
	})
	return leader
}

// metaLeader returns the index of the JetStream meta leader, or -1.
func (c *cluster) metaLeader() int {
	for i, n := range c.nodes {
		if n.srv != nil && n.srv.Server().JetStreamIsLeader() {
			return i
		}
	}
	return -1
}

// streamInfo is the stream's info, or nil if it cannot be had now.
func streamInfo(js jetstream.JetStream, stream string) *jetstream.StreamInfo {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil
	}
	return info
}

// current counts the stream's leader and its current, online followers.
func current(info *jetstream.StreamInfo) int {
	if info == nil || info.Cluster == nil || info.Cluster.Leader == "" {
		return 0
	}
	n := 1
	for _, r := range info.Cluster.Replicas {
		if r.Current && !r.Offline {
			n++
		}
	}
	return n
}
