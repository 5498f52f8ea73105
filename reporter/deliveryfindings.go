package reporter

import (
	"fmt"
	"strings"

	"github.com/imapload/imapload/messages"
)

// deliveriesOnly reports whether step k is below on its deliveries alone
// (StepResult.Below names only them): its commands and held connections
// held.
func deliveriesOnly(k *messages.StepResult) bool {
	if k.Below == "" {
		return false
	}
	for _, cause := range strings.Split(k.Below, "; ") {
		if !strings.HasPrefix(cause, "deliveries: ") && !strings.HasPrefix(cause, "time to inbox: ") {
			return false
		}
	}
	return true
}

// deliveriesServerFinding says what the server's figures (res, in words)
// tell of a knee below on deliveries alone: they cover its IMAP side, so an
// idle server there does not put the bottleneck outside it.
func deliveriesServerFinding(at, res string) string {
	return fmt.Sprintf("%s only the deliveries fell short, the commands held: the server's figures (%s) do not cover "+
		"its delivery path (the LMTP or SMTP service, the delivery agent, its writes to the mailboxes)", at, res)
}
