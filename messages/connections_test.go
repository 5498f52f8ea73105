package messages_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

func TestParseStepCommandConnections(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr []string // substrings of the error, each a listed problem; nil means valid
	}{
		{name: "fleet connections", in: step(`"connections":2000`)},
		{name: "per producer", in: step(`"producer_connections":500`)},
		{name: "largest", in: step(`"connections":1000000,"producer_connections":1000000`)},
		{name: "negative", in: step(`"connections":-1`), wantErr: []string{"connections: -1"}},
		{name: "too many, and the override too, both listed", in: step(`"connections":1000001,"producer_connections":-5`),
			wantErr: []string{"connections: 1000001, want 0 (none) up to 1000000", "producer_connections: -5"}},
		{name: "not a number", in: step(`"connections":"many"`), wantErr: []string{`connections: expected a whole number of connections, got a string ("many")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := messages.ParseStepCommand([]byte(tt.in))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("ParseStepCommand(%s) error = %v, want nil", tt.in, err)
				}
				return
			}
			if !errors.Is(err, messages.ErrInvalidStep) {
				t.Fatalf("ParseStepCommand(%s) error = %v, want errors.Is ErrInvalidStep", tt.in, err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseStepCommand(%s) error = %q, want it to mention %q", tt.in, err, w)
				}
			}
		})
	}
}

func TestConnectionsFor(t *testing.T) {
	tests := []struct {
		name string
		cmd  messages.StepCommand
		live int
		want int
	}{
		{name: "none", cmd: messages.StepCommand{}, live: 3, want: 0},
		{name: "divided by live", cmd: messages.StepCommand{Connections: 3000}, live: 3, want: 1000},
		{name: "rounded up", cmd: messages.StepCommand{Connections: 1000}, live: 3, want: 334},
		{name: "no producer counted", cmd: messages.StepCommand{Connections: 1000}, live: 0, want: 1000},
		{name: "divided by producers", cmd: messages.StepCommand{Connections: 1000, Producers: 4}, live: 2, want: 250},
		{name: "override", cmd: messages.StepCommand{Connections: 1000, ProducerConnections: 70, Producers: 4}, live: 2, want: 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cmd.ConnectionsFor(tt.live); got != tt.want {
				t.Errorf("ConnectionsFor(%d) = %d, want %d", tt.live, got, tt.want)
			}
		})
	}
}

func TestBatchHeldConnections(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*messages.SampleBatch)
		wantErr string
	}{
		{name: "held", mutate: func(b *messages.SampleBatch) {
			b.Info.Connections, b.Health.Held, b.Health.HeldMin, b.Health.HeldDrops = 10_000, 9_990, 9_980, 12
		}},
		{name: "minimum above held", mutate: func(b *messages.SampleBatch) { b.Health.Held, b.Health.HeldMin = 5, 6 },
			wantErr: "held 5, held min 6"},
		{name: "held out of range", mutate: func(b *messages.SampleBatch) { b.Health.Held = messages.MaxConnections + 1 },
			wantErr: "held 1000001"},
		{name: "target out of range", mutate: func(b *messages.SampleBatch) { b.Info.Connections = -1 },
			wantErr: "info: connections -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := batchOf(t, 10)
			tt.mutate(b)
			data, encErr := messages.EncodeBatch(b)
			if tt.wantErr != "" {
				if encErr == nil || !strings.Contains(encErr.Error(), tt.wantErr) {
					t.Errorf("EncodeBatch() error = %v, want one mentioning %q", encErr, tt.wantErr)
				}
				return
			}
			if encErr != nil {
				t.Fatalf("EncodeBatch() error = %v", encErr)
			}
			got, err := messages.DecodeBatch(data)
			if err != nil {
				t.Fatalf("DecodeBatch() error = %v", err)
			}
			if got.Health.Held != b.Health.Held || got.Health.HeldMin != b.Health.HeldMin ||
				got.Health.HeldDrops != b.Health.HeldDrops || got.Info.Connections != b.Info.Connections {
				t.Errorf("DecodeBatch() health %+v info %+v, want %+v %+v", got.Health, got.Info, b.Health, b.Info)
			}
		})
	}
}
