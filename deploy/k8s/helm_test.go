package k8s

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// natsValues is what the checks read of the NATS chart's values.
type natsValues struct {
	Config struct {
		Cluster struct {
			Enabled  bool `json:"enabled"`
			Replicas int  `json:"replicas"`
		} `json:"cluster"`
		JetStream struct {
			Enabled   bool `json:"enabled"`
			FileStore struct {
				Enabled bool   `json:"enabled"`
				Dir     string `json:"dir"`
				PVC     struct {
					Enabled bool   `json:"enabled"`
					Size    string `json:"size"`
				} `json:"pvc"`
			} `json:"fileStore"`
			MemoryStore struct {
				Enabled bool `json:"enabled"`
			} `json:"memoryStore"`
		} `json:"jetstream"`
		Merge map[string]any `json:"merge"`
	} `json:"config"`
	ConfigMap struct {
		Merge struct {
			Data map[string]string `json:"data"`
		} `json:"merge"`
	} `json:"configMap"`
	Container struct {
		Merge struct {
			EnvFrom []struct {
				ConfigMapRef struct {
					Name string `json:"name"`
				} `json:"configMapRef"`
			} `json:"envFrom"`
		} `json:"merge"`
	} `json:"container"`
}

func readValues(t *testing.T) *natsValues {
	t.Helper()
	b, err := os.ReadFile(helmValues)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSONStrict(b) // duplicate keys are errors
	if err != nil {
		t.Fatalf("%s: %v", helmValues, err)
	}
	var v natsValues
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatalf("%s: %v", helmValues, err)
	}
	return &v
}

// TestNATSValues checks the chart's values: three servers, JetStream on
// file storage, and imapload's streams replicated on all of them.
func TestNATSValues(t *testing.T) {
	v := readValues(t)
	c := v.Config
	if !c.Cluster.Enabled || c.Cluster.Replicas != 3 {
		t.Errorf("config.cluster = enabled %v, replicas %d; want enabled, 3", c.Cluster.Enabled, c.Cluster.Replicas)
	}
	js := c.JetStream
	if !js.Enabled || !js.FileStore.Enabled || !js.FileStore.PVC.Enabled || js.FileStore.PVC.Size == "" || js.MemoryStore.Enabled {
		t.Errorf("config.jetstream = %+v; want enabled, on file storage with a sized PVC, no memory store", js)
	}
	f := load(t)
	if got := f.configMaps["imapload-common"].Data["IMAPLOAD_REPLICAS"]; got != "3" {
		t.Errorf("IMAPLOAD_REPLICAS = %q, want 3, the cluster's servers", got)
	}
}

// TestNATSAuthorization checks that the users in the chart's values are what
// `imapload roles --env-keys` writes for the producers of the seeds Secret,
// and that every public key they read is in the ConfigMap the servers get.
func TestNATSAuthorization(t *testing.T) {
	v, f := readValues(t), load(t)
	const file = "imapload-auth.conf"
	if got := v.Config.Merge["00$include"]; got != file {
		t.Errorf("config.merge includes %v, want %s", got, file)
	}
	auth := v.ConfigMap.Merge.Data[file]
	var ids []string
	for k := range f.secrets["imapload-nats-producers"].StringData {
		ids = append(ids, strings.TrimSuffix(k, ".nk"))
	}
	slices.Sort(ids)
	want := authorizationBlock(run(t, "roles", "--env-keys", "--producers", strings.Join(ids, ",")))
	if auth != want {
		t.Errorf("%s in %s differs from imapload roles --env-keys --producers %s:\n%s\nwant:\n%s",
			file, helmValues, strings.Join(ids, ","), auth, want)
	}
	if len(v.Container.Merge.EnvFrom) != 1 {
		t.Fatalf("container.merge.envFrom = %+v, want the ConfigMap of public keys", v.Container.Merge.EnvFrom)
	}
	keys := f.configMaps[v.Container.Merge.EnvFrom[0].ConfigMapRef.Name]
	if keys == nil {
		t.Fatalf("no ConfigMap %s in the manifests", v.Container.Merge.EnvFrom[0].ConfigMapRef.Name)
	}
	var need []string
	for _, m := range regexp.MustCompile(`nkey: \$(\w+)`).FindAllStringSubmatch(auth, -1) {
		need = append(need, m[1])
	}
	if have := slices.Sorted(maps.Keys(keys.Data)); !slices.Equal(have, slices.Sorted(slices.Values(need))) {
		t.Errorf("ConfigMap %s has %v, want the variables the users read, %v", keys.Name, have, need)
	}
}

// authorizationBlock cuts the authorization block out of a nats.conf.
func authorizationBlock(conf string) string {
	_, rest, ok := strings.Cut(conf, "\nauthorization {")
	if !ok {
		return ""
	}
	block, _, _ := strings.Cut(rest, "\n}\n")
	return "authorization {" + block + "\n}\n"
}
