package reporter

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/imapload/imapload/messages"
)

// RenderJSON writes r as indented JSON (the RunReport schema), with <, > and
// & left as they are so that error kinds stay readable.
func RenderJSON(w io.Writer, r messages.RunReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("reporter: render JSON: %w", err)
	}
	return nil
}
