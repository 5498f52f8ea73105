package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
)

// clusterNode is one `imapload nats` process of a three-node cluster.
type clusterNode struct {
	name, store string
	args        []string // the flags after "nats"
	env         []string
	proc        *proc
	url         string
}

// TestClusterNATSProcesses starts three `imapload nats` processes that form
// one JetStream cluster (node 3 configured by the environment alone, as in a
// container), creates the samples stream with three replicas, SIGKILLs one
// node, stores a batch with the other two, and starts the killed node again
// with the same flags and store: it rejoins as a current replica by itself.
func TestClusterNATSProcesses(t *testing.T) {
	testkit.Require(t, testkit.Long)
	t.Parallel()
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	nodes := make([]*clusterNode, len(ports))
	for i, p := range ports {
		n := &clusterNode{name: fmt.Sprintf("n%d", i+1), store: t.TempDir()}
		flags := [][2]string{{"name", n.name}, {"store", n.store}, {"listen", "127.0.0.1:0"},
			{"cluster-name", "c1"}, {"cluster", fmt.Sprintf("127.0.0.1:%d", p)}, {"routes", strings.Join(routes, ",")}}
		for _, f := range flags {
			if i == 2 {
				n.env = append(n.env, "IMAPLOAD_"+strings.ToUpper(strings.ReplaceAll(f[0], "-", "_"))+"="+f[1])
			} else {
				n.args = append(n.args, "--"+f[0], f[1])
			}
		}
		n.start(t)
		nodes[i] = n
	}
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.url)
	}
	nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatalf("nats.Connect(%v) error = %v", urls, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, time.Minute, "the samples stream with 3 current replicas", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := bus.EnsureSamples(ctx, js, &bus.Options{Replicas: 3})
		return err == nil && currentReplicas(js, "") == 3
	})

	killed := nodes[1]
	killed.proc.cmd.Process.Kill() // SIGKILL: nothing flushed, nothing handed over
	<-killed.proc.done
	publishBatch(t, js)
	killed.start(t)
	testkit.WaitFor(t, time.Minute, "the restarted node to be a current replica again", func() bool {
		return currentReplicas(js, killed.name) == 3
	})
}

// start starts the node (again), and waits until it accepts clients.
func (n *clusterNode) start(t *testing.T) {
	t.Helper()
	n.proc = startProc(t, n.name, n.env, append([]string{"nats"}, n.args...)...)
	n.url = n.proc.waitMatch(t, natsURLRe, 30*time.Second)
}

// currentReplicas counts the samples stream's leader and current followers;
// with a name, 0 unless that node is among them.
func currentReplicas(js jetstream.JetStream, name string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, messages.SamplesStream)
	if err != nil {
		return 0
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil || info.Cluster.Leader == "" {
		return 0
	}
	n, found := 1, info.Cluster.Leader == name || name == ""
	for _, r := range info.Cluster.Replicas {
		if r.Current && !r.Offline {
			n++
			found = found || r.Name == name
		}
	}
	if !found {
		return 0
	}
	return n
}

// publishBatch stores one message on a samples subject, retrying while the
// two nodes left elect a leader.
func publishBatch(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	testkit.WaitFor(t, time.Minute, "a batch stored by the two nodes left", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := js.Publish(ctx, messages.SamplesSubject("k1", 1, "p1"), []byte("x"), jetstream.WithMsgID("k1-1-p1-0"))
		return err == nil
	})
}
