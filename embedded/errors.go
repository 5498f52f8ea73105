package embedded

import "errors"

// Sentinel errors returned (wrapped) by this package; test them with errors.Is.
var (
	// ErrNoStoreDir means NATSOptions.StoreDir was empty. It is required so
	// that the server never falls back to the shared $TMPDIR/jetstream.
	ErrNoStoreDir = errors.New("embedded: NATS StoreDir is required")

	// ErrNotReady means a server did not accept connections in time.
	ErrNotReady = errors.New("embedded: server not ready for connections")

	// ErrBadOption means an option is out of range (a negative count, a
	// fraction outside [0, 1], an invalid user format…).
	ErrBadOption = errors.New("embedded: bad option")

	// ErrClosed is returned (with net.ErrClosed) to a connection's reader
	// when the IMAP server closes while a command waits at the gate.
	ErrClosed = errors.New("embedded: server closed")

	// ErrInjectedDrop is returned (with net.ErrClosed, so go-imap treats it
	// as an ordinary close) to the reader of a connection closed by
	// DropFraction or DropAll.
	ErrInjectedDrop = errors.New("embedded: connection dropped on purpose")
)
