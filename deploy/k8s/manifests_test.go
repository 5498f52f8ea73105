package k8s

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// manifestDirs are the folders of manifests: the ones `kubectl apply -f
// deploy/k8s/` applies, and the templates of secrets/ and helm/ (the Helm
// values file apart, which is no manifest).
var manifestDirs = []string{".", "secrets", "helm"}

const helmValues = "helm/nats-values.yaml"

// fleet is every object of the manifests, by kind and name.
type fleet struct {
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	services     map[string]*corev1.Service
	claims       map[string]*corev1.PersistentVolumeClaim
	deployments  map[string]*appsv1.Deployment
	statefulSets map[string]*appsv1.StatefulSet
}

// docSep splits a YAML stream into documents.
var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// load decodes every manifest strictly: an unknown field, a duplicate key, a
// wrong type or an unknown kind fails t.
func load(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{},
		services: map[string]*corev1.Service{}, claims: map[string]*corev1.PersistentVolumeClaim{},
		deployments: map[string]*appsv1.Deployment{}, statefulSets: map[string]*appsv1.StatefulSet{},
	}
	for _, dir := range manifestDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no manifest in %s (%v)", dir, err)
		}
		for _, file := range files {
			if file != helmValues {
				f.loadFile(t, file)
			}
		}
	}
	return f
}

func (f *fleet) loadFile(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, doc := range docSep.Split(string(data), -1) {
		if len(bytes.TrimSpace(yamlContent([]byte(doc)))) == 0 {
			continue
		}
		if err := f.add([]byte(doc)); err != nil {
			t.Errorf("%s, document %d: %v", file, i+1, err)
		}
	}
}

// yamlContent drops comment lines, to tell an empty document.
func yamlContent(doc []byte) []byte {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAll(doc, nil)
}

// add decodes one document into its API type, strictly.
func (f *fleet) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var err error
	switch gvk := tm.APIVersion + " " + tm.Kind; gvk {
	case "v1 ConfigMap":
		err = decode(doc, f.configMaps, func(o *corev1.ConfigMap) string { return o.Name })
	case "v1 Secret":
		err = decode(doc, f.secrets, func(o *corev1.Secret) string { return o.Name })
	case "v1 Service":
		err = decode(doc, f.services, func(o *corev1.Service) string { return o.Name })
	case "v1 PersistentVolumeClaim":
		err = decode(doc, f.claims, func(o *corev1.PersistentVolumeClaim) string { return o.Name })
	case "apps/v1 Deployment":
		err = decode(doc, f.deployments, func(o *appsv1.Deployment) string { return o.Name })
	case "apps/v1 StatefulSet":
		err = decode(doc, f.statefulSets, func(o *appsv1.StatefulSet) string { return o.Name })
	default:
		err = fmt.Errorf("unexpected apiVersion and kind %q", gvk)
	}
	return err
}

// decode unmarshals doc strictly into a new T and files it under its name.
func decode[T any](doc []byte, into map[string]*T, name func(*T) string) error {
	o := new(T)
	if err := yaml.UnmarshalStrict(doc, o); err != nil {
		return err
	}
	n := name(o)
	if n == "" {
		return fmt.Errorf("no metadata.name")
	}
	if _, dup := into[n]; dup {
		return fmt.Errorf("%s defined twice", n)
	}
	into[n] = o
	return nil
}

// workload is a pod template with what the checks need of its owner.
type workload struct {
	kind, name string
	replicas   int32
	selector   *metav1.LabelSelector
	pod        *corev1.PodTemplateSpec
}

func (f *fleet) workloads() []workload {
	var ws []workload
	for n, d := range f.deployments {
		ws = append(ws, workload{"Deployment", n, replicas(d.Spec.Replicas), d.Spec.Selector, &d.Spec.Template})
	}
	for n, s := range f.statefulSets {
		ws = append(ws, workload{"StatefulSet", n, replicas(s.Spec.Replicas), s.Spec.Selector, &s.Spec.Template})
	}
	return ws
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// TestDecodeStrictly decodes every manifest and checks that the fleet is
// all there.
func TestDecodeStrictly(t *testing.T) {
	f := load(t)
	for _, name := range []string{"imapload-producer", "imapload-aggregator", "imapload-reporter"} {
		if f.deployments[name] == nil && f.statefulSets[name] == nil {
			t.Errorf("no Deployment or StatefulSet %s", name)
		}
	}
	if d := f.deployments["imapload-aggregator"]; d != nil && replicas(d.Spec.Replicas) != 1 {
		t.Errorf("imapload-aggregator replicas = %d, want 1 (one durable consumer)", replicas(d.Spec.Replicas))
	}
}

// TestStrictDecodingRefuses checks that the decoding used above would catch
// a misspelt field.
func TestStrictDecodingRefuses(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"unknown field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndatta: {}\n"},
		{"duplicate key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {}\ndata: {}\n"},
		{"wrong type", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: two}\n"},
		{"unknown kind", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fleet{configMaps: map[string]*corev1.ConfigMap{}, deployments: map[string]*appsv1.Deployment{}}
			if err := f.add([]byte(tt.doc)); err == nil {
				t.Errorf("add(%q) error = nil, want one", tt.doc)
			}
		})
	}
}

func metav1LabelSelector(w workload) (labels.Selector, error) {
	if w.selector == nil {
		return labels.Nothing(), nil
	}
	return metav1.LabelSelectorAsSelector(w.selector)
}
