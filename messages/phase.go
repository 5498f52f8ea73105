package messages

import (
	"fmt"

	"github.com/imapload/imapload/messages/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// Phase is one measured part of an IMAP session (RFC 9051). Dial and login set
// a session up; the others are commands the producer schedules at the offered
// rate. On the wire a phase is its name.
type Phase uint8

// The phases imapload measures, each apart from the others.
const (
	Dial         Phase = iota // TCP connect + TLS handshake + server greeting
	Login                     // LOGIN (RFC 9051 §6.2.3)
	List                      // LIST (§6.3.9)
	Select                    // SELECT (§6.3.2)
	Fetch                     // FETCH (§6.4.5)
	Store                     // STORE (§6.4.6)
	Append                    // APPEND (§6.3.12)
	Status                    // STATUS of a mailbox: MESSAGES UIDNEXT UNSEEN (§6.3.11)
	SearchDate                // UID SEARCH SINCE a date some days back (§6.4.4)
	SearchHeader              // UID SEARCH HEADER Subject or From a word (§6.4.4)
	Body                      // UID FETCH BODY.PEEK[] of a whole message, preferring a large one (§6.4.5)
	Copy                      // UID COPY of one message to imapload's own mailbox (§6.4.7)
	Move                      // UID MOVE of a message imapload appended to its own mailbox (RFC 6851, §6.4.8)
	Expunge                   // STORE +FLAGS.SILENT \Deleted, then UID EXPUNGE of a message imapload appended (§6.4.9)
	Noop                      // NOOP (§6.1.2)
	Idle                      // push latency: another connection's APPEND to EXISTS on a session in IDLE (RFC 2177, §6.3.13)
	Logout                    // LOGOUT (§6.1.3)
	Hold                      // a held connection's set-up: dial + LOGIN + SELECT + IDLE accepted (RFC 2177)
	Deliver                   // one message delivered by LMTP (RFC 2033) or SMTP: dial, LHLO/EHLO, MAIL, RCPT, DATA and its replies
	Inbox                     // time to inbox: a delivery's end of DATA to the EXISTS on a held IDLE connection of its account
	numPhases
)

// NumPhases is the number of phases.
const NumPhases = int(numPhases)

var phaseNames = [numPhases]string{"dial", "login", "list", "select", "fetch", "store", "append",
	"status", "search_date", "search_header", "body", "copy", "move", "expunge", "noop", "idle", "logout", "hold",
	"deliver", "inbox"}

// Phases lists every phase in session order.
func Phases() []Phase {
	ps := make([]Phase, numPhases)
	for i := range ps {
		ps[i] = Phase(i)
	}
	return ps
}

// String returns the phase's wire name, e.g. "login".
func (p Phase) String() string {
	if p < numPhases {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// Valid reports whether p is a known phase.
func (p Phase) Valid() bool { return p < numPhases }

// Scheduled reports whether the phase is a command the producer schedules at
// the offered rate (and that delivered throughput counts). Dial and login are
// session set-up, done when a session (re)connects; hold is a held
// connection's set-up, timed apart so that it leaves dial and login alone.
// Deliver and inbox are scheduled at a rate of their own (StepCommand's
// DeliverRate) and counted apart, in StepResult.Deliveries.
func (p Phase) Scheduled() bool { return p > Login && p < Hold }

// ParsePhase returns the phase named name.
func ParsePhase(name string) (Phase, error) {
	for i, n := range phaseNames {
		if n == name {
			return Phase(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want one of %v)", ErrUnknownPhase, name, phaseNames)
}

// MarshalText implements encoding.TextMarshaler, so phases are names in JSON.
func (p Phase) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrUnknownPhase, uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Phase) UnmarshalText(b []byte) error {
	v, err := ParsePhase(string(b))
	*p = v
	return err
}

// EncodeMsgpack writes the phase as its name.
func (p Phase) EncodeMsgpack(e *msgpack.Encoder) error { return e.EncodeString(p.String()) }

// DecodeMsgpack reads a phase name and rejects unknown ones. Within
// DecodeBatch it allocates nothing: the name is compared in place.
func (p *Phase) DecodeMsgpack(d *msgpack.Decoder) error {
	name, err := wire.Text(d, maxPhaseName)
	if err != nil {
		return err
	}
	for i, pn := range phaseNames {
		if string(name) == pn {
			*p = Phase(i)
			return nil
		}
	}
	return p.UnmarshalText(name) // for its error
}

// maxPhaseName bounds a phase name on the wire.
const maxPhaseName = 16
