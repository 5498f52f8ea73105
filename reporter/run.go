package reporter

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/imapload/imapload/bus"
	"github.com/imapload/imapload/messages"
)

// CoversHeader is the header of a published run report that names the stream
// sequence of the newest step result it includes: the report covers every
// step result of its run up to that sequence. A report without it (from an
// older reporter) is taken to cover nothing.
const CoversHeader = "Imapload-Covers"

// runState is what Run knows of one run.
type runState struct {
	steps map[int]messages.StepResult // the latest result of each step
	seq   uint64                      // stream sequence of the newest step result
	dirty bool                        // a result arrived since the last report
	// covered is the highest CoversHeader of the run reports on the stream
	// (ours, or read back after a restart): results up to it are reported.
	covered uint64
}

// Run ensures the results stream, reads it from the start through an ordered
// consumer filtered on the run's results subject (every run's, for a reporter
// of every run), keeps the latest result of each step, and whenever it has
// caught up with the stream builds and renders a new report of each run that
// changed and publishes it, unless a run report on the stream already covers
// the run's newest step result (so a restart republishes nothing). Coverage
// is compared by stream sequence (CoversHeader), never by arrival order: a
// report of older results that lands after newer ones covers only the older.
// Messages that are not valid results are logged, counted and skipped.
//
// Run returns nil once ctx is cancelled, after its consumer has stopped, or
// an error if the stream cannot be set up or read. Call it once.
func (r *Reporter) Run(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: Run called twice", ErrInvalidOptions)
	}
	defer close(r.updates)
	defer r.finalTables()
	js, it, err := r.subscribe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // cancelled while setting up
		}
		return err
	}
	// Stop ends nats.go's pull goroutines by itself. Its Closed() channel is
	// not awaited: in nats.go v1.55.0 an ordered consumer's never closes.
	defer it.Stop()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrConsume, err)
		}
		if r.handle(m) {
			r.flush(ctx, js)
		}
	}
}

func (r *Reporter) subscribe(ctx context.Context) (jetstream.JetStream, jetstream.MessagesContext, error) {
	js, err := jetstream.New(r.nc)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrConsume, err)
	}
	if _, err := bus.EnsureResults(ctx, js, r.opts.Bus); err != nil {
		return nil, nil, err
	}
	filter := messages.ResultsSubjects
	if r.run != "" {
		filter = messages.ResultsSubject(r.run)
	}
	oc, err := js.OrderedConsumer(ctx, messages.ResultsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: ordered consumer on %s: %v", ErrConsume, filter, err)
	}
	it, err := oc.Messages()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrConsume, err)
	}
	return js, it, nil
}

// handle takes in one message and reports whether Run has caught up with
// the stream (time to build reports).
func (r *Reporter) handle(m jetstream.Msg) bool {
	var seq, pending uint64
	if md, err := m.Metadata(); err == nil {
		seq, pending = md.Sequence.Stream, md.NumPending
	}
	run, onRun := messages.ParseResultsSubject(m.Subject())
	kind, res, err := DecodeResult(m.Data())
	if err == nil && res != nil && (!onRun || res.Run != run) {
		err = fmt.Errorf("%w: step result of run %q on subject %s", ErrInvalidResult, res.Run, m.Subject())
	}
	switch {
	case err != nil:
		r.count(func(s *Stats) { s.Invalid++ })
		r.log.Warn("reporter: skipping a message that is not a valid result", "subject", m.Subject(), "seq", seq, "kind", clip(kind, 40), "err", err)
	case res == nil:
		r.count(func(s *Stats) { s.Ignored++ })
		if onRun {
			st := r.state(run)
			st.covered = max(st.covered, coversOf(m.Headers()))
		}
	default:
		r.count(func(s *Stats) { s.Results++ })
		r.accept(res, seq)
	}
	return pending == 0
}

// coversOf reads CoversHeader: 0 (nothing) when it is missing or malformed.
func coversOf(h nats.Header) uint64 {
	n, err := strconv.ParseUint(h.Get(CoversHeader), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// state returns run's state, made empty on first use.
func (r *Reporter) state(run string) *runState {
	st := r.runs[run]
	if st == nil {
		st = &runState{steps: map[int]messages.StepResult{}}
		r.runs[run] = st
	}
	return st
}

func (r *Reporter) accept(res *messages.StepResult, seq uint64) {
	st := r.state(res.Run)
	if old, ok := st.steps[res.Step]; !ok || res.Revision >= old.Revision {
		st.steps[res.Step] = *res // a step's latest revision corrects the earlier ones
	}
	if r.opts.Out != nil && !r.opts.Verbose {
		fmt.Fprintf(r.opts.Out, "run %s %s\n", res.Run, res.Summary())
	}
	st.seq, st.dirty = seq, true
}

// flush builds and renders the report of every run that changed, and
// publishes it unless the stream already holds a report that covers the
// run's newest result. It publishes before it keeps, so that a report seen
// through Report or Updates has been published (or has failed to be).
func (r *Reporter) flush(ctx context.Context, js jetstream.JetStream) {
	for _, run := range slices.Sorted(maps.Keys(r.runs)) {
		st := r.runs[run]
		if !st.dirty {
			continue
		}
		st.dirty = false
		steps := slices.Collect(maps.Values(st.steps))
		rep := Build(run, steps, r.opts.Threshold, time.Now())
		if st.covered < st.seq {
			r.publish(ctx, js, rep, st.seq)
			st.covered = st.seq
		}
		r.keep(rep)
		r.render(rep)
	}
}

// publish sends rep as JSON on its run's results subject, with CoversHeader
// set to covers, the stream sequence of the newest step result it includes.
// The message id names that sequence too, so a restarted reporter that
// rebuilds the same report is deduplicated by the stream.
func (r *Reporter) publish(ctx context.Context, js jetstream.JetStream, rep messages.RunReport, covers uint64) {
	id := messages.ReportMsgID(rep.Run, covers)
	data, err := fitReport(rep.Rounded(), r.nc.MaxPayload()-1024)
	if err == nil {
		msg := nats.NewMsg(messages.ResultsSubject(rep.Run))
		msg.Header.Set(bus.ContentType, bus.JSONType)
		msg.Header.Set(CoversHeader, strconv.FormatUint(covers, 10))
		msg.Header.Set(messages.SummaryHeader, rep.Summary())
		msg.Data = data
		_, err = js.PublishMsg(ctx, msg, jetstream.WithMsgID(id))
	}
	if err != nil {
		r.count(func(s *Stats) { s.PublishErrors++ })
		r.log.Error("reporter: publish run report", "run", rep.Run, "msg_id", id, "err", err)
		return
	}
	r.count(func(s *Stats) { s.Published++ })
}

// fitReport encodes rep in at most limit bytes: whole if it fits, else
// without the per-producer breakdowns, else without the steps (which stay in
// the stream as step results; the files keep everything).
func fitReport(rep messages.RunReport, limit int64) ([]byte, error) {
	data, err := json.Marshal(rep)
	if err != nil || int64(len(data)) <= limit {
		return data, err
	}
	steps := slices.Clone(rep.Steps)
	for i := range steps {
		steps[i].PerProducer = nil
	}
	rep.Steps = steps
	if data, err = json.Marshal(rep); err != nil || int64(len(data)) <= limit {
		return data, err
	}
	rep.Steps = []messages.StepResult{}
	if data, err = json.Marshal(rep); err != nil || int64(len(data)) <= limit {
		return data, err
	}
	return nil, fmt.Errorf("reporter: run report of %d bytes even without steps, limit %d", len(data), limit)
}

// finalTables writes the table of every run reported to Out, once, as Run
// returns (without Verbose, Out had one line per step until then).
func (r *Reporter) finalTables() {
	if r.opts.Out == nil || r.opts.Verbose {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, run := range slices.Sorted(maps.Keys(r.reports)) {
		fmt.Fprintln(r.opts.Out)
		if err := RenderTable(r.opts.Out, r.reports[run]); err != nil {
			r.log.Error("reporter: render table", "run", run, "err", err)
		}
	}
}

// render writes the table to Out (with Verbose) and the files to OutDir, if
// set, and logs where.
func (r *Reporter) render(rep messages.RunReport) {
	if r.opts.Out != nil && r.opts.Verbose {
		if err := RenderTable(r.opts.Out, rep); err != nil {
			r.log.Error("reporter: render table", "run", rep.Run, "err", err)
		}
	}
	if r.opts.OutDir == "" {
		return
	}
	dir := r.opts.OutDir
	if r.run == "" {
		dir = filepath.Join(dir, rep.Run)
	}
	if _, err := WriteFiles(dir, rep); err != nil {
		r.count(func(s *Stats) { s.WriteErrors++ })
		r.log.Error("reporter: write report files", "run", rep.Run, "dir", dir, "err", err)
		return
	}
	r.log.Info("reporter: report files written", "run", rep.Run, "dir", dir, "steps", len(rep.Steps))
}
