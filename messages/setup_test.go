package messages_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// setupOf is a final batch's set-up: every dial greeted, a third of the
// SELECTs refused, two LOGINs unanswered when the window ended.
func setupOf() messages.SetupList {
	return messages.SetupList{
		{Stage: messages.SetupConnect, Started: 60},
		{Stage: messages.SetupGreeting, Started: 60},
		{Stage: messages.SetupLogin, Started: 60, Waiting: 2},
		{Stage: messages.SetupSelect, Started: 58, Failed: 20, Error: "NO [SERVERBUG] injected fault", ErrorCount: 20},
	}
}

// hostileSetup lists more set-up stages than there are.
func hostileSetup(tb testing.TB) []byte {
	m := rawBatch(tb)
	var stages []any
	for range len(messages.SetupStages()) + 1 {
		stages = append(stages, map[string]any{"stage": "connect", "started": 1})
	}
	m["setup"] = stages
	return marshal(tb, m)
}

func TestBatchSetup(t *testing.T) {
	good := batchOf(t, 4)
	good.Final, good.Setup = true, setupOf()
	data, err := messages.EncodeBatch(good)
	if err != nil {
		t.Fatalf("EncodeBatch() error = %v", err)
	}
	back, err := messages.DecodeBatch(data)
	if err != nil {
		t.Fatalf("DecodeBatch() error = %v", err)
	}
	if d := diffBatch(back, good); d != "" {
		t.Errorf("round trip: %s", d)
	}
	if got := back.Setup[2].Done(); got != 58 {
		t.Errorf("login Done() = %d, want 58", got)
	}
	tests := []struct {
		name string
		edit func(l messages.SetupList) messages.SetupList
		want string
	}{
		{"unknown stage", func(l messages.SetupList) messages.SetupList { l[0].Stage = "handshake"; return l }, "stage"},
		{"listed twice", func(l messages.SetupList) messages.SetupList { return append(l, l[0]) }, "twice"},
		{"more failed than started", func(l messages.SetupList) messages.SetupList { l[3].Failed = 59; return l }, "out of range"},
		{"error without a count", func(l messages.SetupList) messages.SetupList { l[3].ErrorCount = 0; return l }, "error kind"},
		{"negative count", func(l messages.SetupList) messages.SetupList { l[0].Started = 1 << 63; return l }, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := batchOf(t, 1)
			b.Final, b.Setup = true, tt.edit(setupOf())
			if _, err := messages.EncodeBatch(b); !errors.Is(err, messages.ErrInvalidBatch) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EncodeBatch() error = %v, want ErrInvalidBatch about %q (DecodeBatch runs the same Validate)", err, tt.want)
			}
		})
	}
	if _, err := messages.DecodeBatch(hostileSetup(t)); !errors.Is(err, messages.ErrInvalidBatch) || !strings.Contains(err.Error(), "setup") {
		t.Errorf("DecodeBatch(a million set-up stages) error = %v, want ErrInvalidBatch", err)
	}
}
