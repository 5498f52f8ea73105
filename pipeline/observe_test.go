package pipeline_test

import (
	"slices"
	"testing"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/observe"
)

// TestRunObserves: with Observe, the run's own observer scrapes the server's
// metrics during the step and the result carries its figures; with Listen,
// the observer connects with an NKey user of its own like every role.
func TestRunObserves(t *testing.T) {
	for _, listen := range []string{"", "127.0.0.1:0"} {
		t.Run("listen="+listen, func(t *testing.T) {
			srv, err := embedded.StartIMAP(&embedded.IMAPOptions{MetricsAddr: "127.0.0.1:0"})
			if err != nil {
				t.Fatalf("embedded.StartIMAP() error = %v", err)
			}
			t.Cleanup(func() { srv.Close() })
			o := shortRun(t, srv, 1)
			o.Listen = listen
			o.Observe = &observe.Options{Endpoints: []string{srv.MetricsURL()}}
			results, err := runCtx(t, o)
			if err != nil {
				t.Fatalf("Run() error = %v", err)
			}
			s := results[0].Server
			if s == nil || !slices.Equal(s.Observers, []string{"local"}) || len(s.Endpoints) != 1 {
				t.Fatalf("step 1 server = %+v, want the local observer's one endpoint", s)
			}
			if e := s.Endpoints[0]; e.Scrapes == 0 || e.Failed != 0 || len(e.Figures) == 0 {
				t.Errorf("endpoint %s: %d scrapes, %d failed (%s), %d figures; want scraped figures and no failure", e.URL, e.Scrapes, e.Failed, e.Error, len(e.Figures))
			}
		})
	}
}
