package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// confDir holds the shipped configuration of the three nodes for the
// official nats-server.
var confDir = filepath.Join("..", "..", "deploy", "nats", "cluster")

// roleKeys are the variables deploy/nats/imapload.conf reads its users' public
// keys from.
var roleKeys = []string{"AGGREGATOR", "REPORTER", "OPERATOR", "PRODUCER_1", "PRODUCER_2", "PRODUCER_3"}

// TestShippedClusterConfigs parses n1.conf, n2.conf and n3.conf as
// nats-server does (keys from the environment): three differently named
// nodes of one cluster, each on its own ports and store, with the same three
// routes, JetStream on, and imapload's six users.
func TestShippedClusterConfigs(t *testing.T) {
	for _, role := range roleKeys {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		t.Setenv("IMAPLOAD_NKEY_"+role, pub)
	}
	var routes []string
	for i := 1; i <= size; i++ {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", 6221+i))
	}
	for i := 1; i <= size; i++ {
		name := fmt.Sprintf("n%d", i)
		t.Run(name, func(t *testing.T) {
			o, err := server.ProcessConfigFile(filepath.Join(confDir, name+".conf"))
			if err != nil {
				t.Fatalf("ProcessConfigFile(%s.conf) error = %v", name, err)
			}
			var got []string
			for _, u := range o.Routes {
				got = append(got, u.String())
			}
			if o.ServerName != name || o.Cluster.Name != "imapload" || o.Port != 4221+i || o.Cluster.Port != 6221+i || !slices.Equal(got, routes) {
				t.Errorf("%s.conf: server %q, cluster %q, port %d, cluster port %d, routes %v; want %s, imapload, %d, %d, %v",
					name, o.ServerName, o.Cluster.Name, o.Port, o.Cluster.Port, got, name, 4221+i, 6221+i, routes)
			}
			if !o.JetStream || filepath.Base(o.StoreDir) != name || len(o.Nkeys) != len(roleKeys) {
				t.Errorf("%s.conf: jetstream %v, store %q, %d users; want on, a store of its own, %d users", name, o.JetStream, o.StoreDir, len(o.Nkeys), len(roleKeys))
			}
		})
	}
}

// TestClusterAuthorizationIsImaploadConf: the cluster's users and
// permissions are those `imapload roles` writes into deploy/nats/imapload.conf
// (its authorization block, verbatim).
func TestClusterAuthorizationIsImaploadConf(t *testing.T) {
	want := authorizationBlock(t, filepath.Join(confDir, "..", "imapload.conf"))
	if got := authorizationBlock(t, filepath.Join(confDir, "authorization.conf")); got != want {
		t.Errorf("deploy/nats/cluster/authorization.conf differs from deploy/nats/imapload.conf's authorization block; copy it again:\n" +
			"  sed -n '/^authorization {/,$p' deploy/nats/imapload.conf  # below the header of authorization.conf")
	}
}

// authorizationBlock returns the file from its line "authorization {" on.
func authorizationBlock(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "\nauthorization {\n")
	if !ok {
		t.Fatalf("%s has no authorization block", path)
	}
	return block
}
