package seed

import (
	"errors"

	"github.com/imapload/imapload/internal/mailgen"
)

// Sentinel errors, wrapped with detail; check them with errors.Is.
var (
	// ErrBadSizes is a size table that cannot be parsed or drawn from.
	// Its text is mailgen's; ParseSizes prefixes it with "seed: ".
	ErrBadSizes = mailgen.ErrBadSizes
	// ErrBadFolders is a folder list that cannot be parsed.
	ErrBadFolders = errors.New("seed: bad folder list")
	// ErrBadOptions is an impossible Options value.
	ErrBadOptions = errors.New("seed: bad options")
	// ErrMessageTooLarge is an mbox message larger than the reader's cap.
	ErrMessageTooLarge = errors.New("seed: mbox message larger than the cap")
	// ErrEmptyMbox is an mbox file that holds no message.
	ErrEmptyMbox = errors.New("seed: the mbox holds no message")
	// ErrNotMbox is a file that does not start with a "From " line.
	ErrNotMbox = errors.New("seed: not an mbox file (it must start with a \"From \" line)")
	// ErrAccounts is returned by Run when some accounts could not be seeded;
	// Summary.Errors says which and why.
	ErrAccounts = errors.New("seed: some accounts were not seeded")
	// ErrInterrupted is returned by Run when its context ended first.
	ErrInterrupted = errors.New("seed: interrupted")
)
