package health_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/imapload/imapload/health"
)

// A process mounts the endpoint with a readiness check of its own; here its
// NATS connection is down.
func ExampleHandler() {
	h := health.Handler(&health.Options{Ready: func() error { return errors.New("NATS: CONNECTING") }})
	for _, path := range []string{health.LivePath, health.ReadyPath} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Printf("%s %d %s", path, w.Code, w.Body)
	}
	// Output:
	// /healthz 200 ok
	// /readyz 503 not ready: NATS: CONNECTING
}
