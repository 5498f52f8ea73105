package messages

import (
	"maps"
	"slices"
	"strings"
)

// Profile is a named workload that means something to a mail operator: the
// commands one kind of client sends, as a mix or a session script. A step
// names it in Profile; what the step gives itself (mix, script,
// fetch_target) overrides the profile's. The IDLE connections a client
// holds are the step's connections: a profile does not know how many
// accounts there are.
type Profile struct {
	// Name is how a step names it.
	Name string
	// Doc says what the profile sends per session, for docs/guide.md and --help.
	Doc string
	// Mix draws each command (nil when Script is set).
	Mix map[string]float64
	// Script fixes each session's commands ("" when Mix is set).
	Script string
	// FetchTarget pins FETCH and body FETCH to "recent" or "random" messages.
	FetchTarget string
	// DeliverPerAccount is the mail one account of this kind receives, in
	// deliveries per second: what imapload run and demo offer as the step's
	// deliver_rate, times the accounts, when they deliver and are given no
	// --deliver-rate (0: none). The figures are in docs/delivery.md.
	DeliverPerAccount float64
}

// Mail received per account, deliveries/s. The Radicati Group's email
// statistics, as widely quoted (e.g. WWLP, 2014-07-30: "121 emails; that's
// the average number of messages employees get every day", rising to 140
// by 2018), put a business user at about 121 messages received a day.
// A desktop client is an office worker's: those arrive in an 8-hour
// working day, 121 / 28,800 s. A phone sees the same mailbox over a
// 16-hour waking day, 121 / 57,600 s: half the rate, for more hours.
const (
	desktopDeliverPerAccount = 121.0 / (8 * 3600)
	mobileDeliverPerAccount  = 121.0 / (16 * 3600)
)

// ImaptestCycle is imaptest's default session with every command it may
// send: LOGIN, LIST, STATUS, SELECT, FETCH, FETCH2 (a whole body), COPY,
// STORE, APPEND, DELETE and EXPUNGE (imapload's expunge phase), LOGOUT.
// imaptest expunges before it appends, any message it flagged; imapload only
// ever expunges a message it appended itself, so here EXPUNGE follows APPEND
// and removes the message the session just appended. A step's script may
// name it as "imaptest".
const ImaptestCycle = "login list status select fetch body copy store append expunge logout"

var profiles = []Profile{
	{
		Name: "imaptest",
		Doc: "imaptest's default per-session probabilities as weights: per LOGIN, LIST 0.5, STATUS 0.5, SELECT 1, " +
			"FETCH 1, whole-body FETCH 1, COPY 0.33, STORE 0.5, DELETE and EXPUNGE 1 (of a message imapload appended: " +
			"imapload never deletes mail it did not put there), APPEND 1, LOGOUT 1",
		Mix: map[string]float64{"list": 50, "status": 50, "select": 100, "fetch": 100, "body": 100, "copy": 33,
			"store": 50, "expunge": 100, "append": 100, "logout": 100},
	},
	{
		Name: "desktop",
		Doc: "a desktop client (Thunderbird, Outlook): one IDLE connection held per account (give the step " +
			"connections = the accounts), and long sessions " +
			"that poll folders with STATUS, open the newest messages (listing headers, then the whole body) and mark them " +
			"read; per LOGIN about 30 STATUS, 10 SELECT, 25 FETCH, 15 whole-body FETCH, 10 STORE, 5 NOOP, 3 APPEND, 1 EXPUNGE",
		Mix: map[string]float64{"status": 30, "select": 10, "fetch": 25, "body": 15, "store": 10, "noop": 5,
			"append": 3, "expunge": 1, "logout": 1},
		FetchTarget:       "recent",
		DeliverPerAccount: desktopDeliverPerAccount,
	},
	{
		Name: "mobile",
		Doc: "a phone: short sessions, a new LOGIN each time the app wakes, that select INBOX and fetch the " +
			"newest headers: LOGIN SELECT FETCH FETCH LOGOUT (offer it in sessions/s with session_rate)",
		Script:            "login select fetch fetch logout",
		FetchTarget:       "recent",
		DeliverPerAccount: mobileDeliverPerAccount,
	},
	{
		Name: "webmail",
		Doc: "a webmail front end on pooled connections: many short commands, folder switches and searches; per " +
			"LOGIN about 3 SELECT, 6 FETCH, 2 SEARCH by date, 2 SEARCH by header, 2 whole-body FETCH, 2 STORE, " +
			"1 STATUS, 1 NOOP, and a COPY, MOVE, APPEND or EXPUNGE now and then",
		Mix: map[string]float64{"select": 15, "fetch": 30, "search_date": 10, "search_header": 10, "body": 10,
			"store": 10, "status": 5, "noop": 5, "copy": 2, "move": 1, "append": 4, "expunge": 1, "logout": 5},
	},
}

// Profiles lists the named profiles, in the order of docs/guide.md.
func Profiles() []Profile { return slices.Clone(profiles) }

// ProfileNamed returns the profile called name.
func ProfileNamed(name string) (Profile, bool) {
	for _, p := range profiles {
		if p.Name == name {
			p.Mix = maps.Clone(p.Mix)
			return p, true
		}
	}
	return Profile{}, false
}

// profileNames lists the profiles' names, for errors.
func profileNames() string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// applyProfile fills in what c leaves to its profile: the mix or script
// (when c gives neither) and the fetch target.
func (c *StepCommand) applyProfile() {
	p, ok := ProfileNamed(c.Profile)
	if !ok {
		return
	}
	if c.Mix == nil && c.Script == "" {
		c.Mix, c.Script = p.Mix, p.Script
	}
	if c.FetchTarget == "" {
		c.FetchTarget = p.FetchTarget
	}
}

// checkProfile adds the problem of an unknown profile.
func (c StepCommand) checkProfile(bad func(string, ...any)) {
	if _, ok := ProfileNamed(c.Profile); c.Profile != "" && !ok {
		bad("profile: %q, want one of %s", c.Profile, profileNames())
	}
}
