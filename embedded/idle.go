package embedded

import (
	"time"

	"github.com/emersion/go-imap/v2/imapserver"
)

// idleRepoll is how often an IDLE session also looks for updates itself.
const idleRepoll = 10 * time.Millisecond

// Idle delegates to imapmemserver's IDLE (RFC 2177), closing a gap in it:
// go-imap's server writes "+ idling" before the session registers for
// updates, so an update another connection makes in between (an APPEND
// right after the continuation) would wait for the next update or for DONE.
// The session therefore also polls every idleRepoll while it idles. Both
// take updates from the queue under its lock, so none is sent twice; an
// update that falls in the gap reaches the client at most idleRepoll late.
func (ss *session) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	done := make(chan error, 1)
	go func() { done <- ss.UserSession.Idle(w, stop) }()
	t := time.NewTicker(idleRepoll)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			if err := ss.UserSession.Poll(w, true); err != nil {
				<-done
				return err
			}
		}
	}
}
