package producer_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/embedded"
	"github.com/imapload/imapload/messages"
)

// TestStepRefusedSubject: a bad command sent without a reply subject (`nats
// pub`) is answered on imapload.step.refused, in the command's own terms
// and with '>' as typed; a request's refusal goes to its reply subject
// only (the refused subject's first message is the published command's).
func TestStepRefusedSubject(t *testing.T) {
	f := newFleet(t, &embedded.IMAPOptions{Users: 2})
	f.start(f.options("c1", 2))
	f.waitLive(1)
	sub, err := f.nc.SubscribeSync(messages.StepRefusedSubject)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if rep := f.request(`{"run":"req","step":1,"rate":-1,"duration":"1s"}`, 1)[0]; rep.Accepted {
		t.Fatalf("reply to a bad request = %+v, want refused", rep)
	}
	if err := f.nc.Publish(messages.StepSubject, []byte(`{"run":"a>b","step":1,"rate":5,"duration":"1s","mix":"fetch"}`)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("nothing on %s: %v", messages.StepRefusedSubject, err)
	}
	var rep messages.StepReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		t.Fatalf("refusal %s: %v", m.Data, err)
	}
	want := []string{`mix: expected an object of command weights such as {"fetch":3,"select":1}, got a string ("fetch")`,
		`run: messages: invalid name: "a>b" has '>'; use letters, digits, '-' and '_'`}
	if rep.Producer != "c1" || rep.Accepted || !slices.Equal(rep.Problems, want) || rep.Error != strings.Join(want, "; ") {
		t.Errorf("refusal on %s = %+v, want c1's problems %q", messages.StepRefusedSubject, rep, want)
	}
	if !bytes.Contains(m.Data, []byte(`a>b`)) || bytes.Contains(m.Data, []byte(`\u003e`)) {
		t.Errorf("refusal %s escapes '>'; want it as typed", m.Data)
	}
}
