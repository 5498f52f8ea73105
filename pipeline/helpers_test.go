package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/pipeline"
	"github.com/imapload/imapload/producer"
	"github.com/imapload/imapload/ramp"
)

// startIMAP starts the embedded IMAP server (10 accounts, no knobs) for
// the test.
func startIMAP(t *testing.T) *embedded.IMAP {
	t.Helper()
	srv, err := embedded.StartIMAP(&embedded.IMAPOptions{})
	if err != nil {
		t.Fatalf("embedded.StartIMAP() error = %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// producerTemplate is a local producer of srv's accounts, its schedule lag
// not judged: the tests check the plumbing, never the host's speed.
func producerTemplate(t *testing.T, srv *embedded.IMAP) producer.Options {
	t.Helper()
	accts, err := producer.TemplateAccounts("user%d", 10, "secret")
	if err != nil {
		t.Fatal(err)
	}
	return producer.Options{Addr: srv.Addr(), Accounts: accts, Sessions: 4, SaturationLag: time.Hour}
}

// shortRun is a pipeline of one step of rate 20/s and 1 s, with tmp as
// the directory of its temporary store.
func shortRun(t *testing.T, srv *embedded.IMAP, producers int) *pipeline.Options {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	return &pipeline.Options{
		Run: "t" + time.Now().UTC().Format("150405"), Producers: producers, Producer: producerTemplate(t, srv),
		Ramp: ramp.Options{
			Template:   messages.StepCommand{Duration: messages.Duration(time.Second)},
			Plan:       ramp.Plan{Rates: []float64{20}},
			ResultWait: time.Minute,
		},
		StepTimeout: 5 * time.Second,
	}
}

// runCtx runs o with a generous bound, failing t if Run does not return.
func runCtx(t *testing.T, o *pipeline.Options) ([]messages.StepResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return pipeline.Run(ctx, o)
}

// checkProducers fails t unless every step lists exactly want as its
// producers.
func checkProducers(t *testing.T, results []messages.StepResult, want []string) {
	t.Helper()
	if len(results) == 0 {
		t.Fatalf("no step result")
	}
	slices.Sort(want)
	for _, r := range results {
		if !slices.Equal(r.Producers, want) {
			t.Errorf("step %d producers = %v, want %v", r.Step, r.Producers, want)
		}
	}
}

// storesLeft lists the temporary NATS stores named name left in $TMPDIR.
func storesLeft(name string) []string {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), "imapload-"+name+"-nats-*"))
	return m
}

// readReport reads the run report the reporter wrote into dir.
func readReport(t *testing.T, dir string) *messages.RunReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("report.json: %v", err)
	}
	rep, err := messages.DecodeRunReport(b)
	if err != nil {
		t.Fatalf("report.json: %v", err)
	}
	return rep
}
