package reporter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/internal/testkit"
	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/reporter"
)

// TestReporterCoversInterleavings lays out the stream a reporter finds when it
// (re)starts: the five results of a run and a run report of results 1..k that
// landed after result at (k ≤ at), in every such order, or a report without
// CoversHeader (an older reporter's). The reporter must publish a report of
// all five results unless the stream already holds one, whatever the order.
func TestReporterCoversInterleavings(t *testing.T) {
	nc, js := startNATS(t)
	type layout struct{ k, at int } // k = 0: a report without CoversHeader
	var layouts []layout
	for k := 1; k <= 5; k++ {
		for at := k; at <= 5; at++ {
			layouts = append(layouts, layout{k, at})
		}
	}
	layouts = append(layouts, layout{0, 5})
	for _, l := range layouts {
		run := fmt.Sprintf("k%d-at%d", l.k, l.at)
		t.Run(run, func(t *testing.T) {
			results := ramp(run)
			var seqs []uint64
			for i, s := range results {
				seqs = append(seqs, publishResult(t, js, s))
				if i+1 == l.at {
					publishReport(t, js, results[:max(l.k, 1)], coverOf(seqs, l.k))
				}
			}
			r, stop := start(t, nc, run, nil)
			waitCovered(t, js, run, seqs[4])
			testkit.WaitFor(t, within, "the reporter to catch up", func() bool { rep, ok := r.Report(run); return ok && len(rep.Steps) == 5 })
			if err := stop(); err != nil {
				t.Fatalf("Run() = %v", err)
			}
			if got, want := r.Stats().Published, uint64(btoi(l.k < 5)); got != want {
				t.Errorf("Stats().Published = %d, want %d (a report of results 1..%d landed after result %d)", got, want, l.k, l.at)
			}
		})
	}
}

// TestReporterCoversAcrossRestart runs a reporter while a report of steps
// 1–3 lands late (after result 4), stops it, publishes result 5 and the late
// report again, and restarts: the new reporter must report all five results.
func TestReporterCoversAcrossRestart(t *testing.T) {
	nc, js := startNATS(t)
	const run = "restart"
	results := ramp(run)
	_, stop1 := start(t, nc, run, nil)
	var seqs []uint64
	for _, s := range results[:3] {
		seqs = append(seqs, publishResult(t, js, s))
	}
	waitCovered(t, js, run, seqs[2])
	seqs = append(seqs, publishResult(t, js, results[3]))
	publishReport(t, js, results[:3], coverOf(seqs, 3))
	if err := stop1(); err != nil {
		t.Fatalf("first Run() = %v", err)
	}
	seqs = append(seqs, publishResult(t, js, results[4]))
	publishReport(t, js, results[:3], coverOf(seqs, 3))
	r2, stop2 := start(t, nc, run, nil)
	waitCovered(t, js, run, seqs[4])
	if err := stop2(); err != nil {
		t.Fatalf("second Run() = %v", err)
	}
	if got := r2.Stats().Published; got != 1 {
		t.Errorf("second reporter Stats().Published = %d, want 1", got)
	}
}

// coverOf is the CoversHeader of a report of results 1..k: the sequence of
// result k, or "" for k = 0 (no header).
func coverOf(seqs []uint64, k int) string {
	if k == 0 {
		return ""
	}
	return strconv.FormatUint(seqs[k-1], 10)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// publishReport plays another reporter: a run report of steps, with
// CoversHeader set to covers unless it is "".
func publishReport(t *testing.T, js jetstream.JetStream, steps []messages.StepResult, covers string) {
	t.Helper()
	run := steps[0].Run
	rep := messages.RunReport{Kind: messages.KindRunReport, Run: run, Threshold: reporter.DefaultThreshold,
		Invalid: []int{}, Findings: []string{}, Steps: steps}
	msg := nats.NewMsg(messages.ResultsSubject(run))
	msg.Header.Set(bus.ContentType, bus.JSONType)
	if covers != "" {
		msg.Header.Set(reporter.CoversHeader, covers)
	}
	msg.Data = mustJSON(t, rep)
	publishMsg(t, js, msg)
}

// waitCovered waits until the run report with the highest CoversHeader on
// run's subject covers seq and holds every step result up to it.
func waitCovered(t *testing.T, js jetstream.JetStream, run string, seq uint64) {
	t.Helper()
	var covers uint64
	var steps int
	testkit.WaitFor(t, within, fmt.Sprintf("a run report of %s covering sequence %d", run, seq), func() bool {
		covers, steps = bestReport(t, js, run)
		return covers >= seq
	})
	if want := resultsUpTo(t, js, run, covers); steps != want {
		t.Errorf("the report covering sequence %d has %d steps, want %d", covers, steps, want)
	}
}

// bestReport reads run's subject and returns the highest CoversHeader of its
// run reports and the number of steps in that report.
func bestReport(t *testing.T, js jetstream.JetStream, run string) (covers uint64, steps int) {
	t.Helper()
	for _, m := range subjectMessages(t, js, run) {
		n, err := strconv.ParseUint(m.Header.Get(reporter.CoversHeader), 10, 64)
		var rep messages.RunReport
		if err != nil || json.Unmarshal(m.Data, &rep) != nil || rep.Kind != messages.KindRunReport || n < covers {
			continue
		}
		covers, steps = n, len(rep.Steps)
	}
	return covers, steps
}

// resultsUpTo counts the distinct steps of the results on run's subject up
// to stream sequence seq.
func resultsUpTo(t *testing.T, js jetstream.JetStream, run string, seq uint64) int {
	t.Helper()
	steps := map[int]bool{}
	for _, m := range subjectMessages(t, js, run) {
		var s messages.StepResult
		if m.Sequence <= seq && json.Unmarshal(m.Data, &s) == nil && s.Kind == messages.KindStepResult {
			steps[s.Step] = true
		}
	}
	return len(steps)
}

// subjectMessages reads every message on run's results subject, in order.
func subjectMessages(t *testing.T, js jetstream.JetStream, run string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	st, err := js.Stream(ctx, messages.ResultsStream)
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); ; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(messages.ResultsSubject(run)))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatalf("GetMsg(%d) error = %v", seq, err)
		}
		out, seq = append(out, m), m.Sequence+1
	}
}
