package messages_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// Every decoder of untrusted input is fuzzed. Seeds come from f.Add below and
// from testdata/fuzz/<FuzzName>/, which also keeps inputs that once found a
// bug; `go test` runs all of them as plain tests.

func FuzzDecodeBatch(f *testing.F) {
	small, err := messages.EncodeBatch(batchOf(f, 4))
	if err != nil {
		f.Fatal(err)
	}
	batch0, err := messages.EncodeBatch(&messages.SampleBatch{Run: "r1", Step: 1, Producer: "p1"})
	if err != nil {
		f.Fatal(err)
	}
	held := batchOf(f, 2)
	held.Info.Connections, held.Health.Held, held.Health.HeldMin, held.Health.HeldDrops = 2000, 1990, 1985, 3
	holding, err := messages.EncodeBatch(held)
	if err != nil {
		f.Fatal(err)
	}
	final := batchOf(f, 2)
	final.Final, final.Setup = true, setupOf()
	setup, err := messages.EncodeBatch(final)
	if err != nil {
		f.Fatal(err)
	}
	deliv := batchOf(f, 2)
	deliv.Info.FleetDeliverRate, deliv.Info.DeliverRate = 40, 20
	deliv.Arrivals = messages.Arrivals{Watched: 30, Seen: 28, Missing: 1, Duplicates: 1}
	delivering, err := messages.EncodeBatch(deliv)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{
		small, small[:len(small)/2], batch0, holding, setup, delivering, marshal(f, rawBatch(f)), hostileSetup(f),
		hostilePhases, hostileLatencies, hostileSketch, hostileString,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := messages.DecodeBatch(data)
		if err != nil {
			if b != nil || !errors.Is(err, messages.ErrInvalidBatch) {
				t.Fatalf("DecodeBatch() = %v, %v; want nil, ErrInvalidBatch", b, err)
			}
			if strings.Contains(err.Error(), "decoder panic") {
				t.Fatalf("DecodeBatch() recovered a panic: %v", err)
			}
			return
		}
		again, err := messages.EncodeBatch(b)
		if err != nil {
			t.Fatalf("EncodeBatch(DecodeBatch()) error = %v", err)
		}
		back, err := messages.DecodeBatch(again)
		if err != nil {
			t.Fatalf("DecodeBatch(EncodeBatch(DecodeBatch())) error = %v", err)
		}
		if d := diffBatch(back, b); d != "" {
			t.Fatalf("re-encoded batch differs: %s", d)
		}
	})
}

func FuzzParseStepCommand(f *testing.F) {
	for _, seed := range []string{
		exampleStep,
		step(`"warmup":"5s","stagger":"1s","producer_rate":50,"producers":3,"mix":{"fetch":1,"store":0},"arrival":"poisson"`),
		step(`"mix":{"dial":1,"nope":-1}`),
		`{"run":"r","step":1,"duration":"1s","script":"LOGIN select,fetch logout","session_rate":7}`,
		`{"run":"r","step":1,"duration":"1s","script":"select login","session_rate":1e308}`,
		step(`"connections":2000,"producer_connections":-1`),
		step(`"deliver_rate":25,"connections":10`),
		step(`"deliver_rate":"x","mix":{"deliver":1}`),
		`{"run":"a b","step":0,"rate":-1,"duration":"48h","warmup":"-1s"}`,
		exampleStep + `}`,
		`{"duration":30}`,
		`null`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := messages.ParseStepCommand(data)
		if err != nil {
			if !errors.Is(err, messages.ErrInvalidStep) {
				t.Fatalf("ParseStepCommand() error = %v, want errors.Is ErrInvalidStep", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseStepCommand() accepted %+v, but Validate() = %v", c, err)
		}
		if c.ShareFor(3) <= 0 || c.StaggerOrDefault() < 0 || c.WarmupOrDefault() < 0 {
			t.Fatalf("accepted %+v: ShareFor(3) = %v, stagger %v, warmup %v", c, c.ShareFor(3), c.StaggerOrDefault(), c.WarmupOrDefault())
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("json.Marshal(%+v) error = %v", c, err)
		}
		back, err := messages.ParseStepCommand(out)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("ParseStepCommand(json.Marshal(c)) = %+v, %v; want %+v", back, err, c)
		}
	})
}

// FuzzParseResultMsgID: any id parses without panicking, and what parses
// is exactly an id ResultMsgID makes.
func FuzzParseResultMsgID(f *testing.F) {
	for _, id := range []string{"result-r1-1", "result-r-1-3.r2", "result--1", "result-r1-0", "result-r1-01", "report-r1-9", "result-r1-2.r0"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		run, step, rev, ok := messages.ParseResultMsgID(id)
		if ok && messages.ResultMsgID(run, step, rev) != id {
			t.Fatalf("ParseResultMsgID(%q) = %q, %d, %d; ResultMsgID of that = %q", id, run, step, rev, messages.ResultMsgID(run, step, rev))
		}
	})
}

// FuzzParseBatchMsgID: any id parses without panicking, and what parses
// is made again by InstanceBatchMsgID.
func FuzzParseBatchMsgID(f *testing.F) {
	for _, id := range []string{"r1-1-p1-7", "r1-1-p1-a1b2c3d4-7", "r_-1-3-p__x-ff-0", "r1-0-p1-1", "r1-1-p1", "r1-1-p1-i-x", "a-1-b-c-d-2"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		run, step, producer, instance, seq, ok := messages.ParseBatchMsgID(id)
		if ok && messages.InstanceBatchMsgID(run, step, producer, instance, seq) != id {
			t.Fatalf("ParseBatchMsgID(%q) = %q %d %q %q %d; InstanceBatchMsgID of that = %q", id, run, step, producer, instance, seq,
				messages.InstanceBatchMsgID(run, step, producer, instance, seq))
		}
	})
}
