package k8s

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// image is the project's image: deploy/docker builds it, compose.yml runs it.
const image = "imapload:dev"

// entrypoint is where deploy/docker/Dockerfile puts the binary.
const entrypoint = "/imapload"

// TestImageIsTheProjects checks that the image name and entrypoint the
// manifests use are the ones deploy/docker builds.
func TestImageIsTheProjects(t *testing.T) {
	for file, want := range map[string]string{
		"../docker/Dockerfile":  `ENTRYPOINT ["` + entrypoint + `"]`,
		"../docker/compose.yml": "image: " + image,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s has no %q: the manifests' image and command would not match it", file, want)
		}
	}
}

// TestContainers checks each container of each workload against the binary.
func TestContainers(t *testing.T) {
	f := load(t)
	cmds := subcommands(t)
	for _, w := range f.workloads() {
		t.Run(w.name, func(t *testing.T) {
			checkSelector(t, w)
			if len(w.pod.Spec.Containers) == 0 {
				t.Fatalf("%s has no container", w.name)
			}
			for i := range w.pod.Spec.Containers {
				c := &w.pod.Spec.Containers[i]
				if c.Image != image {
					t.Errorf("container %s image = %q, want %q", c.Name, c.Image, image)
				}
				if len(c.Command) != 1 || c.Command[0] != entrypoint || len(c.Args) == 0 || !cmds[c.Args[0]] {
					t.Fatalf("container %s runs %q %q, want [%s] and an imapload subcommand", c.Name, c.Command, c.Args, entrypoint)
				}
				cc := &containerCheck{t: t, f: f, w: w, c: c, cmd: c.Args[0], flags: flags(t, c.Args[0])}
				cc.check()
			}
		})
	}
}

// containerCheck checks one container whose first argument is cmd.
type containerCheck struct {
	t     *testing.T
	f     *fleet
	w     workload
	c     *corev1.Container
	cmd   string
	flags map[string]bool
	set   map[string]string // flag → value, from args, env and envFrom
}

func (cc *containerCheck) check() {
	cc.set = map[string]string{}
	cc.checkEnvFrom()
	cc.checkEnv()
	cc.checkArgs() // last: a flag in args wins over its variable
	cc.checkVolumes()
	cc.checkFiles()
	cc.checkHealth()
	if cc.cmd == "producer" {
		cc.checkProducerCPU()
	}
}

func (cc *containerCheck) errorf(format string, a ...any) {
	cc.t.Helper()
	cc.t.Errorf("container %s (%s): %s", cc.c.Name, cc.cmd, fmt.Sprintf(format, a...))
}

// checkArgs: every argument after the subcommand is --flag=value with a flag
// of the subcommand (the = form needs no knowledge of the flags' types).
func (cc *containerCheck) checkArgs() {
	for _, a := range cc.c.Args[1:] {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !ok {
			cc.errorf("argument %q: want --flag=value", a)
			continue
		}
		if !cc.flags[name] {
			cc.errorf("argument %q: imapload %s has no flag --%s", a, cc.cmd, name)
		}
		cc.set[name] = value
	}
}

// checkEnvVar: an IMAPLOAD_* variable must set a flag of the subcommand.
func (cc *containerCheck) checkEnvVar(name, value, from string) {
	flag := flagOfEnv(name)
	switch {
	case flag == "":
		return
	case !cc.flags[flag]:
		cc.errorf("%s%s: imapload %s has no flag --%s", name, from, cc.cmd, flag)
	default:
		cc.set[flag] = value
	}
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

func (cc *containerCheck) checkEnv() {
	defined := map[string]bool{}
	for _, e := range cc.c.Env {
		for _, m := range varRef.FindAllStringSubmatch(e.Value, -1) {
			if !defined[m[1]] {
				cc.errorf("%s refers to $(%s), not defined before it", e.Name, m[1])
			}
		}
		defined[e.Name] = true
		cc.checkValueFrom(e)
		cc.checkEnvVar(e.Name, e.Value, "")
	}
}

func (cc *containerCheck) checkValueFrom(e corev1.EnvVar) {
	switch vf := e.ValueFrom; {
	case vf == nil || vf.FieldRef != nil:
	case vf.ConfigMapKeyRef != nil:
		if _, ok := cc.f.configMaps[vf.ConfigMapKeyRef.Name].Data[vf.ConfigMapKeyRef.Key]; !ok {
			cc.errorf("%s: no key %s in a ConfigMap %s", e.Name, vf.ConfigMapKeyRef.Key, vf.ConfigMapKeyRef.Name)
		}
	case vf.SecretKeyRef != nil:
		if !cc.secretHas(vf.SecretKeyRef.Name, vf.SecretKeyRef.Key) {
			cc.errorf("%s: no key %s in a Secret %s", e.Name, vf.SecretKeyRef.Key, vf.SecretKeyRef.Name)
		}
	default:
		cc.errorf("%s: unexpected valueFrom", e.Name)
	}
}

func (cc *containerCheck) checkEnvFrom() {
	for _, ef := range cc.c.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm := cc.f.configMaps[ef.ConfigMapRef.Name]
			if cm == nil {
				cc.errorf("envFrom: no ConfigMap %s in the manifests", ef.ConfigMapRef.Name)
				continue
			}
			for k, v := range cm.Data {
				if flagOfEnv(k) == "" {
					cc.errorf("envFrom ConfigMap %s: %s is not an IMAPLOAD_ variable", cm.Name, k)
				}
				cc.checkEnvVar(k, v, " (ConfigMap "+cm.Name+")")
			}
		default:
			cc.errorf("envFrom: only ConfigMaps (secrets are mounted as files)")
		}
	}
}

func (cc *containerCheck) secretHas(name, key string) bool {
	s := cc.f.secrets[name]
	if s == nil {
		return false
	}
	_, inData := s.Data[key]
	_, inString := s.StringData[key]
	return inData || inString
}

// checkVolumes: every mount names a volume, and every volume's Secret,
// ConfigMap or claim is in the manifests.
func (cc *containerCheck) checkVolumes() {
	vols := map[string]bool{}
	for _, v := range cc.w.pod.Spec.Volumes {
		vols[v.Name] = true
		switch {
		case v.Secret != nil && cc.f.secrets[v.Secret.SecretName] == nil:
			cc.errorf("volume %s: no Secret %s in the manifests", v.Name, v.Secret.SecretName)
		case v.ConfigMap != nil && cc.f.configMaps[v.ConfigMap.Name] == nil:
			cc.errorf("volume %s: no ConfigMap %s in the manifests", v.Name, v.ConfigMap.Name)
		case v.PersistentVolumeClaim != nil && cc.f.claims[v.PersistentVolumeClaim.ClaimName] == nil:
			cc.errorf("volume %s: no PersistentVolumeClaim %s in the manifests", v.Name, v.PersistentVolumeClaim.ClaimName)
		}
	}
	for _, m := range cc.c.VolumeMounts {
		if !vols[m.Name] {
			cc.errorf("volume mount %s: no such volume", m.Name)
		}
	}
}

// checkFiles: a flag naming a file in a mounted Secret needs that key in it,
// for every pod of the workload ($(POD_NAME) is each StatefulSet pod's name).
func (cc *containerCheck) checkFiles() {
	for flag, value := range cc.set {
		dir, key, secret := cc.secretFile(value)
		if secret == "" {
			continue
		}
		for _, pod := range cc.podNames(value) {
			k := strings.ReplaceAll(key, "$(POD_NAME)", pod)
			if !cc.secretHas(secret, k) {
				cc.errorf("--%s=%s: Secret %s (mounted at %s) has no key %s", flag, value, secret, dir, k)
			}
		}
	}
}

// secretFile returns the mount, file and Secret of path, if a Secret is
// mounted at its folder.
func (cc *containerCheck) secretFile(path string) (dir, key, secret string) {
	i := strings.LastIndex(path, "/")
	if !strings.HasPrefix(path, "/") || i <= 0 {
		return "", "", ""
	}
	dir, key = path[:i], path[i+1:]
	for _, m := range cc.c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range cc.w.pod.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return dir, key, v.Secret.SecretName
			}
		}
	}
	return "", "", ""
}

// podNames are the names $(POD_NAME) takes in the workload's pods.
func (cc *containerCheck) podNames(value string) []string {
	if !strings.Contains(value, "$(POD_NAME)") {
		return []string{""}
	}
	if cc.w.kind != "StatefulSet" {
		cc.errorf("%s: a Deployment's pod names are random: no file can be named after them", value)
		return nil
	}
	var names []string
	for i := range cc.w.replicas {
		names = append(names, cc.w.name+"-"+strconv.Itoa(int(i)))
	}
	return names
}

// checkHealth: --health-listen is set, its port is a container port, and
// the probes ask /healthz (liveness) and /readyz (readiness) on it.
func (cc *containerCheck) checkHealth() {
	addr, ok := cc.set["health-listen"]
	if !ok {
		cc.errorf("no --health-listen: its probes would have nothing to ask")
		return
	}
	_, p, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		cc.errorf("--health-listen=%s: want host:port with a numeric port", addr)
		return
	}
	cc.checkProbe("livenessProbe", cc.c.LivenessProbe, "/healthz", port)
	cc.checkProbe("readinessProbe", cc.c.ReadinessProbe, "/readyz", port)
}

func (cc *containerCheck) checkProbe(what string, p *corev1.Probe, path string, port int) {
	if p == nil || p.HTTPGet == nil {
		cc.errorf("%s: want an httpGet of %s", what, path)
		return
	}
	if p.HTTPGet.Path != path {
		cc.errorf("%s path = %s, want %s", what, p.HTTPGet.Path, path)
	}
	got := p.HTTPGet.Port.IntValue()
	if name := p.HTTPGet.Port.StrVal; name != "" {
		got = 0
		for _, cp := range cc.c.Ports {
			if cp.Name == name {
				got = int(cp.ContainerPort)
			}
		}
	}
	if got != port {
		cc.errorf("%s port %s = %d, want the --health-listen port %d", what, p.HTTPGet.Port.String(), got, port)
	}
}

// checkProducerCPU: a producer runs on --procs threads and requests as many
// cores (one producer per core).
func (cc *containerCheck) checkProducerCPU() {
	procs, ok := cc.set["procs"]
	cpu := cc.c.Resources.Requests[corev1.ResourceCPU]
	if !ok || cpu.String() != procs {
		cc.errorf("requests cpu %s with --procs=%s: want --procs set and equal to the cores requested", cpu.String(), procs)
	}
}

// checkSelector: the workload's selector selects its own pods.
func checkSelector(t *testing.T, w workload) {
	t.Helper()
	sel, err := metav1LabelSelector(w)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.pod.Labels)) {
		t.Errorf("%s %s: selector %v does not select its pod labels %v (%v)", w.kind, w.name, w.selector, w.pod.Labels, err)
	}
}
