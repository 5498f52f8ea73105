package messages_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// Subjects, ids and phase names are typed by operators and matched by NATS:
// these tests pin them.

func TestSubjects(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{name: "SamplesSubject", got: messages.SamplesSubject("r1", 3, "p-1"), want: "imapload.samples.r1.3.p-1"},
		{name: "SamplesSubject large step", got: messages.SamplesSubject("run_2", 1000000, "host7"), want: "imapload.samples.run_2.1000000.host7"},
		{name: "StepSamplesFilter", got: messages.StepSamplesFilter("r1", 3), want: "imapload.samples.r1.3.>"},
		{name: "RunSamplesFilter", got: messages.RunSamplesFilter("r1"), want: "imapload.samples.r1.>"},
		{name: "ResultsSubject", got: messages.ResultsSubject("r1"), want: "imapload.results.r1"},
		{name: "BatchMsgID", got: messages.BatchMsgID("r1", 3, "p1", 7), want: "r1-3-p1-7"},
		{name: "BatchMsgID dash", got: messages.BatchMsgID("r-1", 3, "p-1", 7), want: "r_-1-3-p_-1-7"},
		{name: "BatchMsgID underscore", got: messages.BatchMsgID("r_1", 3, "p__1", 7), want: "r__1-3-p____1-7"},
		{name: "BatchMsgID batch 0", got: messages.BatchMsgID("r1", 1, "p1", 0), want: "r1-1-p1-0"},
		{name: "BatchMsgID large seq", got: messages.BatchMsgID("r1", 1, "p1", 1<<63), want: "r1-1-p1-9223372036854775808"},
		{name: "ProducerKey", got: messages.ProducerKey("p-1"), want: "p-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
			}
		})
	}
}

// TestBatchMsgIDUnique checks that different batches never share an id,
// over names built from the characters that matter ('-', '_', a digit, a
// letter), however the separators could line up.
func TestBatchMsgIDUnique(t *testing.T) {
	var names []string
	var grow func(prefix string)
	grow = func(prefix string) {
		if prefix != "" {
			names = append(names, prefix)
		}
		if len(prefix) == 3 {
			return
		}
		for _, c := range "-_1a" {
			grow(prefix + string(c))
		}
	}
	grow("")
	seen := make(map[string]string)
	for _, run := range names {
		for _, step := range []int{1, 12} {
			for _, producer := range names {
				for _, seq := range []uint64{1, 3} {
					id := messages.BatchMsgID(run, step, producer, seq)
					key := fmt.Sprintf("%q %d %q %d", run, step, producer, seq)
					if other, ok := seen[id]; ok {
						t.Fatalf("BatchMsgID(%s) = BatchMsgID(%s) = %q", key, other, id)
					}
					seen[id] = key
				}
			}
		}
	}
}

// TestSubjectsNest checks that the filters match what they should by NATS
// token rules: a subject is under a filter ending in ">" when it extends the
// filter's prefix by at least one token.
func TestSubjectsNest(t *testing.T) {
	under := func(subject, filter string) bool {
		prefix, ok := strings.CutSuffix(filter, ">")
		return ok && strings.HasPrefix(subject, prefix) && len(subject) > len(prefix)
	}
	s := messages.SamplesSubject("r1", 3, "p1")
	for _, f := range []string{messages.StepSamplesFilter("r1", 3), messages.RunSamplesFilter("r1"), messages.SamplesSubjects} {
		if !under(s, f) {
			t.Errorf("%q is not under %q", s, f)
		}
	}
	for _, f := range []string{messages.StepSamplesFilter("r1", 31), messages.StepSamplesFilter("r", 3), messages.RunSamplesFilter("r")} {
		if under(s, f) {
			t.Errorf("%q is under %q, want not", s, f)
		}
	}
	if r := messages.ResultsSubject("r1"); !under(r, messages.ResultsSubjects) {
		t.Errorf("%q is not under %q", r, messages.ResultsSubjects)
	}
	if got := strings.Count(s, "."); got != 4 {
		t.Errorf("SamplesSubject() = %q has %d dots, want 4 (one token per part)", s, got)
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{name: "simple", in: "r1"},
		{name: "one character", in: "x"},
		{name: "every allowed class", in: "Run_2024-06-01"},
		{name: "64 characters", in: strings.Repeat("a", 64)},
		{name: "all digits", in: "20240601"},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "65 characters", in: strings.Repeat("a", 65), wantErr: "65 characters, at most 64"},
		{name: "dot splits a subject", in: "r.1", wantErr: `has '.'`},
		{name: "space", in: "r 1", wantErr: `has ' '`},
		{name: "star wildcard", in: "*", wantErr: `has '*'`},
		{name: "tail wildcard", in: "r>", wantErr: `has '>'`},
		{name: "tab", in: "r\t1", wantErr: `has '\t'`},
		{name: "NUL", in: "r\x00", wantErr: `has '\x00'`},
		{name: "non-ASCII", in: "läuft", wantErr: "has"},
		{name: "slash", in: "a/b", wantErr: `has '/'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := messages.ValidName(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("ValidName(%q) = %v, want nil", tt.in, err)
				}
				return
			}
			if !errors.Is(err, messages.ErrInvalidName) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ValidName(%q) = %v, want ErrInvalidName mentioning %q", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestPhaseNames(t *testing.T) {
	want := []string{"dial", "login", "list", "select", "fetch", "store", "append",
		"status", "search_date", "search_header", "body", "copy", "move", "expunge", "noop", "idle", "logout", "hold",
		"deliver", "inbox"}
	ps := messages.Phases()
	if len(ps) != messages.NumPhases || len(ps) != len(want) {
		t.Fatalf("Phases() has %d phases, NumPhases = %d, want %d", len(ps), messages.NumPhases, len(want))
	}
	for i, p := range ps {
		if int(p) != i || p.String() != want[i] || !p.Valid() {
			t.Errorf("Phases()[%d] = %d %q (valid %v), want %d %q", i, p, p, p.Valid(), i, want[i])
		}
	}
	consts := []messages.Phase{messages.Dial, messages.Login, messages.List, messages.Select,
		messages.Fetch, messages.Store, messages.Append, messages.Status, messages.SearchDate, messages.SearchHeader,
		messages.Body, messages.Copy, messages.Move, messages.Expunge, messages.Noop, messages.Idle, messages.Logout, messages.Hold,
		messages.Deliver, messages.Inbox}
	if !slices.Equal(ps, consts) {
		t.Errorf("Phases() = %v, want the constants in session order %v", ps, consts)
	}
	for _, p := range ps {
		if n := len(p.String()); n > 16 || strings.ToLower(p.String()) != p.String() {
			t.Errorf("phase %q: %d bytes, want lower case and at most 16 (the wire's bound)", p, n)
		}
	}
	wantBad := fmt.Sprintf("phase(%d)", messages.NumPhases)
	if bad := messages.Phase(messages.NumPhases); bad.Valid() || bad.String() != wantBad {
		t.Errorf("Phase(%d) valid %v, String() = %q; want invalid %q", messages.NumPhases, bad.Valid(), bad, wantBad)
	}
	if messages.Deliver.Scheduled() || messages.Inbox.Scheduled() {
		t.Errorf("Scheduled(): deliver %v, inbox %v; want false, false (counted apart, at their own rate)",
			messages.Deliver.Scheduled(), messages.Inbox.Scheduled())
	}
	if messages.Hold.Scheduled() || messages.Dial.Scheduled() || !messages.Logout.Scheduled() {
		t.Errorf("Scheduled(): hold %v, dial %v, logout %v; want false, false, true",
			messages.Hold.Scheduled(), messages.Dial.Scheduled(), messages.Logout.Scheduled())
	}
}

func TestParsePhase(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    messages.Phase
		wantErr error
	}{
		{name: "dial", in: "dial", want: messages.Dial},
		{name: "login", in: "login", want: messages.Login},
		{name: "fetch", in: "fetch", want: messages.Fetch},
		{name: "logout", in: "logout", want: messages.Logout},
		{name: "empty", in: "", wantErr: messages.ErrUnknownPhase},
		{name: "upper case", in: "LOGIN", wantErr: messages.ErrUnknownPhase},
		{name: "idle", in: "idle", want: messages.Idle},
		{name: "search_header", in: "search_header", want: messages.SearchHeader},
		{name: "unknown", in: "delete", wantErr: messages.ErrUnknownPhase},
		{name: "padded", in: " fetch", wantErr: messages.ErrUnknownPhase},
		{name: "formatted invalid phase", in: "phase(17)", wantErr: messages.ErrUnknownPhase},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := messages.ParsePhase(tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && got != tt.want) {
				t.Errorf("ParsePhase(%q) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
	for _, p := range messages.Phases() {
		if got, err := messages.ParsePhase(p.String()); got != p || err != nil {
			t.Errorf("ParsePhase(%q) = %v, %v; want %v", p, got, err, p)
		}
	}
}

func TestPhaseScheduled(t *testing.T) {
	tests := []struct {
		phase messages.Phase
		want  bool
	}{
		{messages.Dial, false}, {messages.Login, false},
		{messages.List, true}, {messages.Select, true}, {messages.Fetch, true},
		{messages.Store, true}, {messages.Append, true}, {messages.Logout, true},
		{messages.Status, true}, {messages.SearchDate, true}, {messages.SearchHeader, true}, {messages.Body, true},
		{messages.Copy, true}, {messages.Move, true}, {messages.Expunge, true}, {messages.Noop, true}, {messages.Idle, true},
		{messages.Phase(messages.NumPhases), false}, {messages.Phase(255), false},
	}
	for _, tt := range tests {
		t.Run(tt.phase.String(), func(t *testing.T) {
			if got := tt.phase.Scheduled(); got != tt.want {
				t.Errorf("%v.Scheduled() = %v, want %v", tt.phase, got, tt.want)
			}
		})
	}
	// The default mix names scheduled phases only, and the same ones as
	// before the client commands (status … idle) came: those run when a
	// step's mix names them.
	for name := range messages.DefaultMix() {
		if p, err := messages.ParsePhase(name); err != nil || !p.Scheduled() {
			t.Errorf("DefaultMix() has %q: ParsePhase = %v, %v; want a scheduled phase", name, p, err)
		}
	}
	if got, want := slices.Sorted(maps.Keys(messages.DefaultMix())), []string{"append", "fetch", "list", "logout", "select", "store"}; !slices.Equal(got, want) {
		t.Errorf("DefaultMix() names %v, want %v", got, want)
	}
}

func TestPhaseJSON(t *testing.T) {
	type doc struct {
		Phase  messages.Phase         `json:"phase"`
		Counts map[messages.Phase]int `json:"counts"`
	}
	in := doc{Phase: messages.Select, Counts: map[messages.Phase]int{messages.Fetch: 2, messages.Dial: 1}}
	out, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("json.Marshal(%+v) error = %v", in, err)
	}
	if want := `{"phase":"select","counts":{"dial":1,"fetch":2}}`; string(out) != want {
		t.Errorf("json.Marshal() = %s, want %s", out, want)
	}
	var back doc
	if err := json.Unmarshal(out, &back); err != nil || back.Phase != in.Phase || len(back.Counts) != 2 || back.Counts[messages.Fetch] != 2 {
		t.Errorf("json.Unmarshal(%s) = %+v, %v; want %+v", out, back, err, in)
	}

	if _, err := json.Marshal(messages.Phase(messages.NumPhases)); !errors.Is(err, messages.ErrUnknownPhase) {
		t.Errorf("json.Marshal(Phase(NumPhases)) error = %v, want ErrUnknownPhase", err)
	}
	var p messages.Phase
	if err := json.Unmarshal([]byte(`"delete"`), &p); !errors.Is(err, messages.ErrUnknownPhase) {
		t.Errorf("json.Unmarshal(\"delete\") error = %v, want ErrUnknownPhase", err)
	}
	if err := json.Unmarshal([]byte(`4`), &p); err == nil {
		t.Errorf("json.Unmarshal(4) = %v, want an error: phases are names", p)
	}
}

func TestParseSamplesSubject(t *testing.T) {
	tests := []struct {
		subject  string
		run      string
		step     int
		producer string
		ok       bool
	}{
		{subject: messages.SamplesSubject("r-1", 3, "p_2"), run: "r-1", step: 3, producer: "p_2", ok: true},
		{subject: messages.SamplesSubject("r1", messages.MaxStep, "p"), run: "r1", step: messages.MaxStep, producer: "p", ok: true},
		{subject: "imapload.samples.r1.0.p"},
		{subject: "imapload.samples.r1.03.p"},
		{subject: "imapload.samples.r1.+3.p"},
		{subject: "imapload.samples.r1.x.p"},
		{subject: "imapload.samples.r1.3"},
		{subject: "imapload.samples.r1.3.p.q"},
		{subject: "imapload.samples..3.p"},
		{subject: "imapload.samples.r1.3."},
		{subject: "imapload.results.r1.3.p"},
		{subject: "imapload.samples.r1.1000001.p"},
	}
	for _, tt := range tests {
		run, step, producer, ok := messages.ParseSamplesSubject(tt.subject)
		if run != tt.run || step != tt.step || producer != tt.producer || ok != tt.ok {
			t.Errorf("ParseSamplesSubject(%q) = %q, %d, %q, %v; want %q, %d, %q, %v",
				tt.subject, run, step, producer, ok, tt.run, tt.step, tt.producer, tt.ok)
		}
	}
}

func TestParseResultsSubject(t *testing.T) {
	tests := []struct {
		subject string
		run     string
		ok      bool
	}{
		{subject: messages.ResultsSubject("r-1"), run: "r-1", ok: true},
		{subject: "imapload.results.a.b"},
		{subject: "imapload.results."},
		{subject: "imapload.samples.r1"},
		{subject: "imapload.results"},
	}
	for _, tt := range tests {
		if run, ok := messages.ParseResultsSubject(tt.subject); run != tt.run || ok != tt.ok {
			t.Errorf("ParseResultsSubject(%q) = %q, %v; want %q, %v", tt.subject, run, ok, tt.run, tt.ok)
		}
	}
}

func TestResultMsgID(t *testing.T) {
	for _, tt := range []struct {
		run            string
		step, revision int
		want           string
	}{
		{"r1", 3, 0, "result-r1-3"},
		{"r1", 3, 2, "result-r1-3.r2"},
		{"a-1", 2, 1, "result-a-1-2.r1"},
	} {
		if got := messages.ResultMsgID(tt.run, tt.step, tt.revision); got != tt.want {
			t.Errorf("ResultMsgID(%q, %d, %d) = %q, want %q", tt.run, tt.step, tt.revision, got, tt.want)
		}
	}
}

func TestReportMsgID(t *testing.T) {
	if got := messages.ReportMsgID("r-1", 42); got != "report-r-1-42" {
		t.Errorf("ReportMsgID(r-1, 42) = %q, want report-r-1-42", got)
	}
}

// TestInstanceBatchMsgID: two processes with one producer id never share a
// message id, nor with the plain BatchMsgID of any other producer.
func TestInstanceBatchMsgID(t *testing.T) {
	a, b := messages.InstanceBatchMsgID("r1", 1, "p1", "0a1b2c3d", 0), messages.InstanceBatchMsgID("r1", 1, "p1", "ffff0000", 0)
	if a == b || a != "r1-1-p1-0a1b2c3d-0" {
		t.Errorf("InstanceBatchMsgID = %q, %q; want distinct, the first r1-1-p1-0a1b2c3d-0", a, b)
	}
	if plain := messages.BatchMsgID("r1", 1, "p1-0a1b2c3d", 0); plain == a {
		t.Errorf("BatchMsgID of producer p1-0a1b2c3d = %q, the same as an instance's id", plain)
	}
	if got := messages.InstanceBatchMsgID("r1", 1, "p1", "", 7); got != messages.BatchMsgID("r1", 1, "p1", 7) {
		t.Errorf("InstanceBatchMsgID with no instance = %q, want BatchMsgID's", got)
	}
}

// TestParseBatchMsgID reads back what InstanceBatchMsgID and BatchMsgID make,
// escaped names included, and refuses ids of another shape.
func TestParseBatchMsgID(t *testing.T) {
	for _, c := range []struct{ run, producer, instance string }{
		{"r1", "p1", "0a1b2c3d"}, {"r-1", "p_2", "ff"}, {"run-x", "p-1-2", ""}, {"r__", "_-", "abc"},
	} {
		id := messages.InstanceBatchMsgID(c.run, 3, c.producer, c.instance, 42)
		run, step, producer, instance, seq, ok := messages.ParseBatchMsgID(id)
		if !ok || run != c.run || step != 3 || producer != c.producer || instance != c.instance || seq != 42 {
			t.Errorf("ParseBatchMsgID(%q) = %q %d %q %q %d %v; want %q 3 %q %q 42 true", id, run, step, producer, instance, seq, ok, c.run, c.producer, c.instance)
		}
	}
	for _, id := range []string{"", "r1", "r1-1-p1", "r1-x-p1-1", "r1-0-p1-1", "r1-1-p1-a-b-1", "r1-1-p1-a-x", "r1-01-p1-1", "result-r1-1"} {
		if _, _, _, _, _, ok := messages.ParseBatchMsgID(id); ok {
			t.Errorf("ParseBatchMsgID(%q) ok, want refused", id)
		}
	}
}
