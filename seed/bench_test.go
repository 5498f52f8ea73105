package seed

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkGenerate measures writing generated messages of the default
// size table: the seeder's own CPU per message and per MB.
func BenchmarkGenerate(b *testing.B) {
	tab, _ := ParseSizes(DefaultSizes)
	g := &Generator{Sizes: tab, Seed: 1, Now: time.Now(), Days: 365}
	var n int64
	i := 0
	for b.Loop() {
		m, _ := g.Message(Key{Account: "user1", Folder: "INBOX", Index: i})
		n += int64(len(m.Body))
		i++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkMboxReader measures reading an mbox of 4 KiB messages.
func BenchmarkMboxReader(b *testing.B) {
	msg := "From a@example.org Mon Jan  1 00:00:00 2024\nSubject: x\n\n" + strings.Repeat("a line of text that is long enough\n>From a quoted line\n", 80) + "\n"
	data := []byte(strings.Repeat(msg, 256))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := NewMboxReader(bytes.NewReader(data), 0)
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}
