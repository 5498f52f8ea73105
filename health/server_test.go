package health_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/imapload/imapload/health"
)

// start serves o on 127.0.0.1:0 until the test ends, and returns its base URL.
func start(t *testing.T, o *health.Options) string {
	t.Helper()
	s, err := health.Listen("127.0.0.1:0", o)
	if err != nil {
		t.Fatalf("Listen(127.0.0.1:0) error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve() after cancel = %v, want nil", err)
		}
	})
	return "http://" + s.Addr().String()
}

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func TestProbes(t *testing.T) {
	var down atomic.Bool
	base := start(t, &health.Options{Ready: func() error {
		if down.Load() {
			return errors.New("NATS: RECONNECTING")
		}
		return nil
	}})
	tests := []struct {
		name     string
		path     string
		down     bool
		wantCode int
		wantBody string
	}{
		{"live", health.LivePath, false, http.StatusOK, "ok"},
		{"live while not ready", health.LivePath, true, http.StatusOK, "ok"},
		{"ready", health.ReadyPath, false, http.StatusOK, "ready"},
		{"not ready", health.ReadyPath, true, http.StatusServiceUnavailable, "not ready: NATS: RECONNECTING"},
		{"unknown path", "/nope", false, http.StatusNotFound, "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			down.Store(tt.down)
			code, body := get(t, base+tt.path)
			if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tt.path, code, body, tt.wantCode, tt.wantBody)
			}
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	base := start(t, nil)
	resp, err := http.Post(base+health.LivePath, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatalf("POST %s: %v", health.LivePath, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s = %d, want %d", health.LivePath, resp.StatusCode, http.StatusMethodNotAllowed)
	}
}

func TestListenInUse(t *testing.T) {
	s, err := health.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatalf("Listen(127.0.0.1:0) error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Serve closes the listener on its way out
	defer func() {
		if err := s.Serve(ctx); err != nil {
			t.Errorf("Serve(cancelled) = %v, want nil", err)
		}
	}()
	_, err = health.Listen(s.Addr().String(), nil)
	if !errors.Is(err, health.ErrListen) {
		t.Errorf("Listen(%s) in use error = %v, want ErrListen", s.Addr(), err)
	}
}

func TestServeBadAddress(t *testing.T) {
	err := health.Serve(context.Background(), "127.0.0.1:not-a-port", nil)
	if !errors.Is(err, health.ErrListen) {
		t.Errorf("Serve(bad address) error = %v, want ErrListen", err)
	}
}
