package messages_test

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/vmihailenco/msgpack/v5"
)

func measure(t *testing.T, name string, data []byte) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	b, err := messages.DecodeBatch(data)
	el := time.Since(t0)
	runtime.ReadMemStats(&m1)
	t.Logf("%s: len %d alloc %d stack %d->%d (%v) err=%v b=%v", name, len(data), m1.TotalAlloc-m0.TotalAlloc, m0.StackInuse, m1.StackInuse, el, err, b != nil)
}

func enc(v any) []byte {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func TestScratch(t *testing.T) {
	measure(t, "phases", append([]byte{0x81, 0xa6}, append([]byte("phases"), 0xdd, 0xff, 0xff, 0xff, 0xff, 0)...))
	measure(t, "strclaim", []byte{0x81, 0xdb, 0xff, 0xff, 0xff, 0xff})
	measure(t, "runclaim", append([]byte{0x81, 0xa3, 'r', 'u', 'n'}, 0xdb, 0xff, 0xff, 0xff, 0xff))
	deep := append([]byte{0x81, 0xa1, 'x'}, bytes.Repeat([]byte{0x91}, 1<<20-10)...)
	measure(t, "deep", deep)
	base := map[string]any{"run": "r1", "producer": "p1", "step": 1, "seq": -1,
		"health": map[string]any{"sessions": uint64(1<<32 + 5), "lost": -3},
		"phases": []any{map[string]any{"phase": "fetch", "attempted": 1, "succeeded": 1, "dropped": -1}},
	}
	b, err := messages.DecodeBatch(enc(base))
	t.Logf("neg: %+v %v", b, err)
}
