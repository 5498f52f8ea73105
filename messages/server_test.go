package messages_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
)

// serverFigures is an observer's final message of one step with two endpoints.
func serverFigures() *messages.ServerFigures {
	return &messages.ServerFigures{
		Kind: messages.KindServerFigures, Run: "r1", Step: 3, Observer: "mail1", Final: true,
		Interval: messages.Duration(time.Second), Window: messages.Duration(30 * time.Second),
		Endpoints: []messages.EndpointFigures{
			{URL: "http://127.0.0.1:9100/metrics", Scrapes: 31, Covered: messages.Duration(30 * time.Second),
				Figures: []messages.Figure{
					{Name: "node_cpu_busy_cores", Kind: messages.FigureRate, Value: 1.97, Min: 1.9, Max: 2},
					{Name: "node_cpu_cores", Kind: messages.FigureGauge, Value: 2, Min: 2, Max: 2},
				}},
			{URL: "http://127.0.0.1:9900/metrics", Scrapes: 29, Failed: 2, Error: "HTTP 500 Internal Server Error",
				Figures: []messages.Figure{{Name: "dovecot_logins_duration_seconds", Kind: messages.FigureMean, Value: 0.004}}},
		},
	}
}

func TestDecodeServerFigures(t *testing.T) {
	good, err := json.Marshal(serverFigures())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*messages.ServerFigures)) []byte {
		s := serverFigures()
		f(s)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"good", "", good},
		{"announcement", "", edit(func(s *messages.ServerFigures) {
			s.Final = false
			for i := range s.Endpoints {
				s.Endpoints[i] = messages.EndpointFigures{URL: s.Endpoints[i].URL}
			}
		})},
		{"malformed", "malformed JSON", good[:len(good)/2]},
		{"oversized", "bytes, at most", make([]byte, messages.MaxServerBytes+1)},
		{"kind", "kind", edit(func(s *messages.ServerFigures) { s.Kind = "step_result" })},
		{"run", "run", edit(func(s *messages.ServerFigures) { s.Run = "a b" })},
		{"observer", "observer", edit(func(s *messages.ServerFigures) { s.Observer = "" })},
		{"step", "step 0", edit(func(s *messages.ServerFigures) { s.Step = 0 })},
		{"no url", "url of 0 bytes", edit(func(s *messages.ServerFigures) { s.Endpoints[0].URL = "" })},
		{"negative count", "want ≥ 0", edit(func(s *messages.ServerFigures) { s.Endpoints[1].Failed = -1 })},
		{"figure name", "figure name", edit(func(s *messages.ServerFigures) { s.Endpoints[0].Figures[0].Name = "cpu{mode}" })},
		{"figure kind", "kind \"histogram\"", edit(func(s *messages.ServerFigures) { s.Endpoints[0].Figures[0].Kind = "histogram" })},
		{"too many endpoints", "endpoints, at most", edit(func(s *messages.ServerFigures) {
			for len(s.Endpoints) <= messages.MaxEndpoints {
				s.Endpoints = append(s.Endpoints, s.Endpoints[0])
			}
		})},
		{"too many figures", "figures, at most", edit(func(s *messages.ServerFigures) {
			for len(s.Endpoints[0].Figures) <= messages.MaxFigures {
				s.Endpoints[0].Figures = append(s.Endpoints[0].Figures, s.Endpoints[0].Figures[0])
			}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := messages.DecodeServerFigures(tc.data)
			if tc.want == "" {
				if err != nil || f == nil {
					t.Fatalf("DecodeServerFigures() = %v, %v; want figures", f, err)
				}
				return
			}
			if f != nil || !errors.Is(err, messages.ErrInvalidServer) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeServerFigures() = %v, %v; want an ErrInvalidServer saying %q", f, err, tc.want)
			}
		})
	}
}

func TestServerSubjectAndIDs(t *testing.T) {
	if got, want := messages.ServerSubject("r1", 3, "mail1"), "imapload.server.r1.3.mail1"; got != want {
		t.Errorf("ServerSubject() = %q, want %q", got, want)
	}
	if got, want := messages.StepServerFilter("r1", 3), "imapload.server.r1.3.>"; got != want {
		t.Errorf("StepServerFilter() = %q, want %q", got, want)
	}
	ids := map[string]bool{}
	for _, id := range []string{
		messages.ServerMsgID("r-1", 3, "p", false), messages.ServerMsgID("r", 1, "3-p", false),
		messages.ServerMsgID("r-1", 3, "p", true), messages.BatchMsgID("r-1", 3, "p", 0),
	} {
		if ids[id] {
			t.Errorf("message id %q given twice", id)
		}
		ids[id] = true
	}
}

// TestStepResultServer: a result's server figures survive publishing
// (Rounded, JSON, DecodeResult), rounded and not shared; bad ones are refused.
func TestStepResultServer(t *testing.T) {
	f := serverFigures()
	r := messages.StepResult{Kind: messages.KindStepResult, Run: "r1", Step: 3, TargetRate: 100,
		Server: &messages.ServerResult{Observers: []string{"mail1"}, Endpoints: f.Endpoints}}
	r.Server.Endpoints[0].Figures[0].Value = 1.974321
	rounded := r.Rounded()
	rounded.Server.Endpoints[0].Figures[1].Value = 99
	if r.Server.Endpoints[0].Figures[1].Value != 2 {
		t.Fatal("Rounded() shares the server figures with the result")
	}
	rounded = r.Rounded()
	data, err := json.Marshal(rounded)
	if err != nil {
		t.Fatal(err)
	}
	back, err := messages.DecodeResult(data)
	if err != nil {
		t.Fatalf("DecodeResult() error = %v", err)
	}
	if got := back.Server.Endpoints[0].Figures[0].Value; got != 1.974 {
		t.Errorf("published node_cpu_busy_cores = %v, want 1.974 (4 significant digits)", got)
	}
	if !reflect.DeepEqual(back.Server, rounded.Server) {
		t.Errorf("server figures changed on the way:\n got %+v\nwant %+v", back.Server, rounded.Server)
	}
	r.Server.Missing = []string{"no such observer"}
	if err := r.Validate(); !errors.Is(err, messages.ErrInvalidResult) {
		t.Errorf("Validate() of a result with a bad observer name = %v, want ErrInvalidResult", err)
	}
}

func FuzzDecodeServerFigures(f *testing.F) {
	good, err := json.Marshal(serverFigures())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(good), string(good[:len(good)/3]), `{"kind":"server_figures","run":"r","step":1,"observer":"o","endpoints":null}`,
		`{"kind":"server_figures","run":"r","step":1,"observer":"o","endpoints":[{"url":"u","figures":[{"name":"a","kind":"mean","value":1e308}]}]}`,
		`null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := messages.DecodeServerFigures(data)
		if err != nil {
			if s != nil || !errors.Is(err, messages.ErrInvalidServer) {
				t.Fatalf("DecodeServerFigures() = %v, %v; want nil, ErrInvalidServer", s, err)
			}
			return
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("json.Marshal(DecodeServerFigures()) error = %v", err)
		}
		back, err := messages.DecodeServerFigures(again)
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Fatalf("DecodeServerFigures(json.Marshal(s)) = %+v, %v; want %+v", back, err, s)
		}
	})
}
