package messages

import (
	"fmt"

	"github.com/imapload/imapload/messages/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// The bounded decoders of a batch's parts: msgpack v5.4.1 pre-allocates
// whatever length a slice header claims, so every slice type of a batch
// decodes itself and refuses lengths above the caps (see package wire for
// the machinery and the bug).

// PhaseList is a batch's phases with a bounded decoder.
type PhaseList []PhaseStats

// ErrorList is a phase's error kinds with a bounded decoder.
type ErrorList []ErrorCount

// SketchBytes is an encoded sketch with a bounded decoder.
type SketchBytes []byte

// Micros is a list of latencies in whole microseconds with a bounded decoder.
type Micros []uint32

// DecodeMsgpack decodes at most NumPhases phase entries, each as msgpack's
// reflection would but faster (see wire.DecodeStruct).
func (l *PhaseList) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := wire.ArrayLen(d, "phases", NumPhases)
	if err != nil || n < 0 {
		*l = nil
		return err
	}
	s := make(PhaseList, n)
	for i := range s {
		if err := wire.DecodeStruct(d, (*phaseDecoder)(&s[i]), phaseFields); err != nil {
			return err
		}
	}
	*l = s
	return nil
}

// DecodeMsgpack decodes at most MaxErrorKinds error kinds.
func (l *ErrorList) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := wire.ArrayLen(d, "errors", MaxErrorKinds)
	if err != nil || n < 0 {
		*l = nil
		return err
	}
	s := make(ErrorList, n)
	for i := range s {
		if err := d.Decode(&s[i]); err != nil {
			return err
		}
	}
	*l = s
	return nil
}

// DecodeMsgpack reads at most MaxSketchBytes bytes.
func (b *SketchBytes) DecodeMsgpack(d *msgpack.Decoder) error {
	s, err := wire.Bytes(d, "sketch", MaxSketchBytes)
	if err != nil {
		return err
	}
	*b = s
	return nil
}

// DecodeMsgpack decodes at most MaxReservoir latencies, each ≤ MaxLatencyMicros.
func (m *Micros) DecodeMsgpack(d *msgpack.Decoder) error {
	s, err := wire.Uint32s(d, "latencies", MaxReservoir, latencyOutOfRange)
	if err != nil {
		return err
	}
	*m = s
	return nil
}

func latencyOutOfRange(v uint64) error { return fmt.Errorf("latency %d µs out of range", v) }

// phaseFields and sampleFields are the msgpack names of PhaseStats' and
// Sample's fields, in order.
var (
	phaseFields  = []string{"phase", "attempted", "succeeded", "dropped", "response", "service", "tls", "errors"}
	sampleFields = []string{"count", "values", "sketch"}
)

// phaseDecoder and sampleDecoder decode PhaseStats and Sample field by
// field for wire.DecodeStruct; a nil value of a field whose type has its own
// decoder is the zero value, as msgpack's reflection reads it.
type (
	phaseDecoder  PhaseStats
	sampleDecoder Sample
)

func (p *phaseDecoder) Reset() { *p = phaseDecoder{} }

func (p *phaseDecoder) DecodeField(d *msgpack.Decoder, i int) error {
	var err error
	switch i {
	case 0:
		return decodeOrZero(d, &p.Phase)
	case 1:
		p.Attempted, err = d.DecodeUint64()
	case 2:
		p.Succeeded, err = d.DecodeUint64()
	case 3:
		p.Dropped, err = d.DecodeUint64()
	case 4:
		return wire.DecodeStruct(d, (*sampleDecoder)(&p.Response), sampleFields)
	case 5:
		return wire.DecodeStruct(d, (*sampleDecoder)(&p.Service), sampleFields)
	case 6:
		return wire.DecodeStruct(d, (*sampleDecoder)(&p.TLS), sampleFields)
	case 7:
		return decodeOrZero(d, &p.Errors)
	}
	return err
}

func (s *sampleDecoder) Reset() { *s = sampleDecoder{} }

func (s *sampleDecoder) DecodeField(d *msgpack.Decoder, i int) error {
	switch i {
	case 0:
		var err error
		s.Count, err = d.DecodeUint64()
		return err
	case 1:
		return decodeOrZero(d, &s.Values)
	}
	return decodeOrZero(d, &s.Sketch)
}

// decodeOrZero decodes v with its own decoder, or sets it to its zero
// value on nil.
func decodeOrZero[T any, P interface {
	*T
	msgpack.CustomDecoder
}](d *msgpack.Decoder, v P) error {
	null, err := wire.IsNil(d)
	if null || err != nil {
		var zero T
		*v = zero
		return err
	}
	return v.DecodeMsgpack(d)
}
