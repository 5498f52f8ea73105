package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/verdict"
)

// natsFromConf starts an in-process server from a configuration text;
// "STORE" in it becomes a temporary store directory.
func natsFromConf(t *testing.T, text string) *embedded.NATS {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "nats.conf")
	text = strings.ReplaceAll(text, "STORE", strconv.Quote(filepath.Join(dir, "js")))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ns, err := embedded.StartNATS(&embedded.NATSOptions{ConfigFile: path, Host: "127.0.0.1", Port: -1})
	if err != nil {
		t.Fatalf("StartNATS(%s): %v", text, err)
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// connectWith connects as `imapload aggregator args…` would.
func connectWith(t *testing.T, args ...string) error {
	t.Helper()
	c, err := configuredNATS(t, args...)
	if err == nil {
		var nc *nats.Conn
		if nc, err = c.connect("test"); err == nil {
			nc.Close()
		}
	}
	return err
}

const tokenSecret = "tok-Xy7-secret"

// TestNATSAuthToken logs in with --nats-token-file, and a wrong token is
// refused without being shown.
func TestNATSAuthToken(t *testing.T) {
	ns := natsFromConf(t, "jetstream { store_dir: STORE }\nauthorization { token: \""+tokenSecret+"\" }\n")
	if err := connectWith(t, "--nats", ns.ClientURL(), "--nats-token-file", secretFile(t, tokenSecret+"\n")); err != nil {
		t.Errorf("--nats-token-file with the token: %v", err)
	}
	err := connectWith(t, "--nats", ns.ClientURL(), "--nats-token", "wrong-tok-Qq9")
	checkConfigureErr(t, err, nats.ErrAuthorization, "")
	if strings.Contains(err.Error(), "wrong-tok-Qq9") {
		t.Errorf("connect with a wrong token: %v shows it", err)
	}
}

// TestNATSAuthNKey logs in with a role's seed from `imapload roles`; a file
// that holds no seed is an error that shows nothing of the file.
func TestNATSAuthNKey(t *testing.T) {
	dir := writeRoles(t, "p1")
	ns := startRolesServer(t, dir)
	if err := connectWith(t, "--nats", ns.ClientURL(), "--nats-nkey", filepath.Join(dir, "operator.nk")); err != nil {
		t.Errorf("--nats-nkey operator.nk: %v", err)
	}
	if err := connectWith(t, "--nats", ns.ClientURL()); err == nil {
		t.Errorf("connect without credentials to the roles' server succeeded")
	}
	bad := secretFile(t, "not-a-seed-Zk4\n")
	err := connectWith(t, "--nats", ns.ClientURL(), "--nats-nkey", bad)
	if err == nil || strings.Contains(err.Error(), "Zk4") {
		t.Errorf("--nats-nkey with no seed in the file: %v, want an error that does not quote the file", err)
	}
}

// TestNATSAuthConflicts: credentials given two ways, or half of a pair, are
// usage errors that name the flags, never the values.
func TestNATSAuthConflicts(t *testing.T) {
	seed, pw := secretFile(t, "SUAXXX\n"), secretFile(t, "pw-Hh8\n")
	tests := []struct {
		name string
		args []string
	}{
		{"token and user", []string{"--nats-token", "tok-Hh8", "--nats-user", "u", "--nats-password-file", pw}},
		{"token and its file", []string{"--nats-token", "tok-Hh8", "--nats-token-file", pw}},
		{"nkey and creds", []string{"--nats-nkey", seed, "--nats-creds", seed}},
		{"URL user info and nkey", []string{"--nats", "nats://u:pw-Hh8@127.0.0.1:1", "--nats-nkey", seed}},
		{"URL user info and token", []string{"--nats", "nats://u:pw-Hh8@127.0.0.1:1", "--nats-token", "tok-Hh8"}},
		{"cert without key", []string{"--nats-cert", seed}},
		{"key without cert", []string{"--nats-key", seed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := connectWith(t, tt.args...)
			if exitCode(err) != verdict.ExitUsage {
				t.Fatalf("connect %v: %v (exit %d), want a usage error", tt.args, err, exitCode(err))
			}
			if strings.Contains(err.Error(), "Hh8") {
				t.Errorf("connect %v: %v shows a secret", tt.args, err)
			}
		})
	}
}

// TestNATSAuthTLS connects over TLS with --nats-ca (and a client
// certificate); without the CA the server's certificate is refused.
func TestNATSAuthTLS(t *testing.T) {
	certFile, keyFile := writeCert(t)
	ns := natsFromConf(t, "jetstream { store_dir: STORE }\ntls { cert_file: "+strconv.Quote(certFile)+", key_file: "+strconv.Quote(keyFile)+" }\n")
	if err := connectWith(t, "--nats", ns.ClientURL(), "--nats-ca", certFile); err != nil {
		t.Errorf("--nats-ca: %v", err)
	}
	if err := connectWith(t, "--nats", ns.ClientURL(), "--nats-ca", certFile, "--nats-cert", certFile, "--nats-key", keyFile); err != nil {
		t.Errorf("--nats-ca with --nats-cert and --nats-key: %v", err)
	}
	if err := connectWith(t, "--nats", ns.ClientURL()); err == nil {
		t.Errorf("TLS without --nats-ca trusted a self-signed certificate")
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files.
func writeCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	cert, _, err := embedded.SelfSignedCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, block := range map[string]*pem.Block{
		certFile: {Type: "CERTIFICATE", Bytes: cert.Certificate[0]},
		keyFile:  {Type: "PRIVATE KEY", Bytes: key},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}
