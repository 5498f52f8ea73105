package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/verdict"
)

// TestTLSFlagsNeedTLS refuses --tls-insecure and --tls-ca without --tls (they
// would be ignored in silence), as flags or from the environment, before any
// connection.
func TestTLSFlagsNeedTLS(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{name: "insecure flag", args: []string{"--tls-insecure"}, want: "--tls-insecure needs --tls"},
		{name: "insecure variable", env: map[string]string{"IMAPLOAD_TLS_INSECURE": "true"}, want: "--tls-insecure needs --tls"},
		{name: "ca flag", args: []string{"--tls-ca", "ca.pem"}, want: "--tls-ca needs --tls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := append([]string{"producer", "--nats", unreachableNATS, "--imap", "127.0.0.1:1", "--procs", "0"}, tt.args...)
			_, _, err := runCLI(context.Background(), args...)
			if exitCode(err) != verdict.ExitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("imapload %v = %v (exit %d), want a usage error containing %q", args, err, exitCode(err), tt.want)
			}
		})
	}
}

// TestTLSInsecureWarns: with --tls, --tls-insecure is accepted and warned
// about at start, naming the risk, before anything connects.
func TestTLSInsecureWarns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, errOut, err := runCLI(ctx, "producer", "--nats", unreachableNATS, "--imap", "127.0.0.1:1", "--procs", "0", "--tls", "--tls-insecure")
	if err == nil || exitCode(err) == verdict.ExitUsage {
		t.Errorf("producer --tls --tls-insecure = %v, want the NATS connection error", err)
	}
	for _, want := range []string{"level=WARN", "--tls-insecure", "NOT verified", "password"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("producer --tls --tls-insecure logged %q, want %q in it", errOut, want)
		}
	}
	_, errOut, _ = runCLI(ctx, "producer", "--nats", unreachableNATS, "--imap", "127.0.0.1:1", "--procs", "0", "--tls")
	if strings.Contains(errOut, "tls-insecure") {
		t.Errorf("producer --tls logged %q, want no --tls-insecure warning", errOut)
	}
}
