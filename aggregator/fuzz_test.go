package aggregator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// FuzzPoolAdd feeds arbitrary bytes through the service's path: decode, and
// when that succeeds, pool (twice) and derive a result that must encode as
// JSON (no NaN or infinity may leak into it).
func FuzzPoolAdd(f *testing.F) {
	for _, b := range stepBatches("r1", 1, []string{"a"}, 2) {
		data, err := messages.EncodeBatch(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	rec := recorder.New("r1", 1, "a", messages.StepInfo{FleetRate: 1, Rate: 1, Duration: 1}, nil)
	rec.Record(messages.Login, 0, 0)
	rec.RecordTLS(time.Hour)
	rec.Fail(messages.Dial, nil)
	data, _ := messages.EncodeBatch(rec.Cut(0, 1, true, messages.Health{Saturated: true, Lost: 3}))
	f.Add(data)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := messages.DecodeBatch(data)
		if err != nil {
			return
		}
		p := NewPool(b.Run, b.Step, nil)
		if _, err := p.Add(b); err != nil {
			return
		}
		if added, err := p.Add(b); added || err != nil {
			t.Fatalf("Pool.Add(same batch again) = %v, %v; want false, nil", added, err)
		}
		if _, err := json.Marshal(p.Result()); err != nil {
			t.Fatalf("json.Marshal(Pool.Result()) error = %v", err)
		}
	})
}
