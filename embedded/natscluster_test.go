package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/internal/testkit"
)

// TestStartNATSCluster starts three nodes on loopback, each with the same
// route list (its own included), and creates a stream with three replicas
// through a client that knows all three.
func TestStartNATSCluster(t *testing.T) {
	t.Parallel()
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	var urls []string
	for i, p := range ports {
		n := startNATS(t, &embedded.NATSOptions{Name: fmt.Sprintf("n%d", i+1), ClusterName: "c1",
			ClusterListen: fmt.Sprintf("127.0.0.1:%d", p), Routes: []string{strings.Join(routes, ",")}})
		if got := n.RouteURL(); got != routes[i] {
			t.Errorf("n%d RouteURL() = %q, want %q", i+1, got, routes[i])
		}
		urls = append(urls, n.ClientURL())
	}
	nc, err := nats.Connect(strings.Join(urls, ","))
	if err != nil {
		t.Fatalf("nats.Connect(%v) error = %v", urls, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var info *jetstream.StreamInfo
	testkit.WaitFor(t, 30*time.Second, "a stream with 3 replicas, all current", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"r3.>"},
			Storage: jetstream.FileStorage, Replicas: 3})
		if err != nil {
			return false // no meta leader yet
		}
		info, err = st.Info(ctx)
		return err == nil && currentReplicas(info) == 3
	})
	if info.Config.Replicas != 3 || info.Cluster.Name != "c1" {
		t.Errorf("stream info: replicas %d, cluster %q; want 3, c1", info.Config.Replicas, info.Cluster.Name)
	}
}

// currentReplicas counts the stream's leader and its current followers.
func currentReplicas(info *jetstream.StreamInfo) int {
	if info.Cluster == nil || info.Cluster.Leader == "" {
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

func TestStartNATSClusterErrors(t *testing.T) {
	tests := []struct {
		name string
		opts embedded.NATSOptions
		want error
	}{
		{"no server name", embedded.NATSOptions{ClusterName: "c", ClusterListen: "127.0.0.1:0"}, embedded.ErrBadOption},
		{"no cluster listen", embedded.NATSOptions{Name: "n1", ClusterName: "c"}, embedded.ErrBadOption},
		{"bad cluster port", embedded.NATSOptions{Name: "n1", ClusterName: "c", ClusterListen: "127.0.0.1:x"}, embedded.ErrBadOption},
		{"routes without a cluster", embedded.NATSOptions{Routes: []string{"nats-route://127.0.0.1:6222"}}, embedded.ErrBadOption},
		{"listen without a cluster", embedded.NATSOptions{ClusterListen: "127.0.0.1:0"}, embedded.ErrBadOption},
		{"bad route", embedded.NATSOptions{Name: "n1", ClusterName: "c", ClusterListen: "127.0.0.1:0",
			Routes: []string{"127.0.0.1:6222"}}, embedded.ErrBadOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.StoreDir = t.TempDir()
			n, err := embedded.StartNATS(&o)
			if err == nil {
				n.Shutdown()
				t.Fatalf("StartNATS(%+v) succeeded, want an error", tt.opts)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("StartNATS() error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestStartNATSClusterFromFile: a file's cluster block is kept when no
// cluster option is given, and a node without a server_name is refused.
func TestStartNATSClusterFromFile(t *testing.T) {
	port := freePort(t)
	conf := writeConf(t, fmt.Sprintf(`server_name: f1
jetstream { store_dir: STORE }
cluster { name: cf, listen: "127.0.0.1:%d", routes: ["nats-route://127.0.0.1:%d"] }
`, port, port))
	n := startNATS(t, &embedded.NATSOptions{ConfigFile: conf, Host: "127.0.0.1", Port: -1})
	if got, want := n.RouteURL(), fmt.Sprintf("nats-route://127.0.0.1:%d", port); got != want {
		t.Errorf("RouteURL() = %q, want %q", got, want)
	}
	if got := n.Server().Name(); got != "f1" {
		t.Errorf("Server().Name() = %q, want f1", got)
	}
	unnamed := writeConf(t, "jetstream { store_dir: STORE }\ncluster { name: cf, listen: \"127.0.0.1:-1\" }\n")
	if n, err := embedded.StartNATS(&embedded.NATSOptions{ConfigFile: unnamed}); !errors.Is(err, embedded.ErrBadOption) {
		if n != nil {
			n.Shutdown()
		}
		t.Errorf("StartNATS(cluster file without server_name) error = %v, want %v", err, embedded.ErrBadOption)
	}
}

func TestParseRoutes(t *testing.T) {
	tests := []struct {
		name   string
		routes []string
		want   string // the hosts, comma-separated
		err    bool
	}{
		{name: "none"},
		{name: "list in one", routes: []string{"nats-route://a:6222, nats-route://b:6222"}, want: "a:6222,b:6222"},
		{name: "separate", routes: []string{"nats-route://a:6222", "nats://b:7222"}, want: "a:6222,b:7222"},
		{name: "no scheme", routes: []string{"a:6222"}, err: true},
		{name: "no port", routes: []string{"nats-route://a"}, err: true},
		{name: "other scheme", routes: []string{"http://a:6222"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			urls, err := embedded.ParseRoutes(tt.routes)
			if (err != nil) != tt.err {
				t.Fatalf("ParseRoutes(%q) error = %v, want error %v", tt.routes, err, tt.err)
			}
			var hosts []string
			for _, u := range urls {
				hosts = append(hosts, u.Host)
			}
			if got := strings.Join(hosts, ","); got != tt.want {
				t.Errorf("ParseRoutes(%q) = %s, want %s", tt.routes, got, tt.want)
			}
		})
	}
}
