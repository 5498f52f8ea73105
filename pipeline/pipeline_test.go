package pipeline_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/pipeline"
)

// TestRun runs the whole pipeline on an embedded NATS with two local
// producers: the step is offered by both, the reporter's files hold it when
// Run returns, and the temporary store is gone.
func TestRun(t *testing.T) {
	srv := startIMAP(t)
	o := shortRun(t, srv, 2)
	o.TempName = "ptest"
	o.OutDir = t.TempDir()
	var ready []pipeline.Endpoint
	o.OnReady = func(e pipeline.Endpoint) {
		ready = append(ready, e)
		if len(storesLeft("ptest")) != 1 {
			t.Errorf("while running: temporary stores %v, want one", storesLeft("ptest"))
		}
	}
	results, err := runCtx(t, o)
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	checkProducers(t, results, []string{o.Run + "-p1", o.Run + "-p2"})
	if len(ready) != 1 || !ready[0].Embedded || !ready[0].Aggregator || ready[0].Credentials != "" || ready[0].URL == "" {
		t.Errorf("OnReady endpoints = %+v, want one: embedded, with an aggregator, no credentials", ready)
	}
	if left := storesLeft("ptest"); len(left) > 0 {
		t.Errorf("Run left its temporary store: %v", left)
	}
	checkReportFile(t, filepath.Join(o.OutDir, "report.json"), len(results))
}

// checkReportFile fails t unless the reporter's report.json holds steps
// steps.
func checkReportFile(t *testing.T, path string, steps int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reporter's file: %v", err)
	}
	rep, err := messages.DecodeRunReport(b)
	if err != nil || len(rep.Steps) != steps {
		t.Errorf("%s: %v, %d steps; want the run's %d", path, err, len(rep.Steps), steps)
	}
}

// TestRunOptions: options no pipeline can run are refused before anything
// starts.
func TestRunOptions(t *testing.T) {
	srv := startIMAP(t)
	tests := []struct {
		name string
		edit func(o *pipeline.Options)
	}{
		{"no run id", func(o *pipeline.Options) { o.Run = "" }},
		{"bad run id", func(o *pipeline.Options) { o.Run = "a.b" }},
		{"nobody offers load", func(o *pipeline.Options) { o.Producers = 0 }},
		{"negative producers", func(o *pipeline.Options) { o.Producers = -1 }},
		{"local producers without a target", func(o *pipeline.Options) { o.Producer.Addr = "" }},
		{"another NATS and a listen address", func(o *pipeline.Options) { o.NATS, o.Listen = "nats://127.0.0.1:1", "127.0.0.1:0" }},
		{"another NATS and a store", func(o *pipeline.Options) { o.NATS, o.StoreDir = "nats://127.0.0.1:1", t.TempDir() }},
		{"bad listen address", func(o *pipeline.Options) { o.Listen = "127.0.0.1" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := shortRun(t, srv, 1)
			tt.edit(o)
			if _, err := runCtx(t, o); !errors.Is(err, pipeline.ErrOptions) {
				t.Errorf("Run() error = %v, want ErrOptions", err)
			}
			if left := storesLeft("run"); len(left) > 0 {
				t.Errorf("a refused Run made a store: %v", left)
			}
		})
	}
	if _, err := runCtx(t, nil); !errors.Is(err, pipeline.ErrOptions) {
		t.Errorf("Run(nil) error = %v, want ErrOptions", err)
	}
}
