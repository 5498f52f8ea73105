package messages_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/imapload/imapload/messages"
)

// TestProfilesAreValid: every profile's mix validates and its script parses,
// and each is documented.
func TestProfilesAreValid(t *testing.T) {
	for _, p := range messages.Profiles() {
		if (p.Mix == nil) == (p.Script == "") {
			t.Errorf("profile %s: mix %v, script %q; want exactly one", p.Name, p.Mix, p.Script)
		}
		if p.Mix != nil {
			if err := messages.ValidateMix(p.Mix); err != nil {
				t.Errorf("profile %s: mix: %v", p.Name, err)
			}
		}
		if p.Script != "" {
			if _, err := messages.ParseScript(p.Script); err != nil {
				t.Errorf("profile %s: script: %v", p.Name, err)
			}
		}
		if len(p.Doc) < 40 {
			t.Errorf("profile %s: doc %q, want what it sends per session", p.Name, p.Doc)
		}
	}
	if sc, err := messages.ParseScript("imaptest"); err != nil || sc.String() != messages.ImaptestCycle {
		t.Errorf("ParseScript(imaptest) = %v, %v; want %q", sc, err, messages.ImaptestCycle)
	}
}

func TestStepCommandProfile(t *testing.T) {
	parse := func(body string) (messages.StepCommand, error) {
		return messages.ParseStepCommand([]byte(`{"run":"r","step":1,"duration":"10s",` + body + `}`))
	}
	desktop, _ := messages.ProfileNamed("desktop")
	c, err := parse(`"rate":100,"profile":"desktop"`)
	if err != nil || !maps.Equal(c.Mix, desktop.Mix) || c.FetchTarget != messages.FetchRecent {
		t.Errorf("desktop: %+v, %v; want its mix and fetch_target recent", c, err)
	}
	c, err = parse(`"rate":100,"profile":"desktop","mix":{"noop":1},"fetch_target":"random"`)
	if err != nil || !maps.Equal(c.Mix, map[string]float64{"noop": 1}) || c.FetchTarget != messages.FetchRandom {
		t.Errorf("desktop with a mix and a target of its own: %+v, %v; want the command's", c, err)
	}
	c, err = parse(`"session_rate":50,"profile":"mobile"`)
	if err != nil || c.Rate != 200 || c.Script == "" || c.Mix != nil {
		t.Errorf("mobile at 50 sessions/s: %+v, %v; want its script, rate 200 (4 commands a session)", c, err)
	}
	if _, err := parse(`"rate":100,"profile":"laptop"`); err == nil || !strings.Contains(err.Error(), `profile: "laptop", want one of imaptest, desktop, mobile, webmail`) {
		t.Errorf("an unknown profile: error = %v", err)
	}
	if _, err := parse(`"session_rate":50,"profile":"webmail"`); err == nil || !strings.Contains(err.Error(), "session_rate: needs a script") {
		t.Errorf("sessions/s with a mix profile: error = %v, want session_rate: needs a script", err)
	}
}

// TestProfileDeliveries: the desktop and mobile profiles receive mail at
// 121 messages a day per account (an 8-hour working day on a desktop, a
// 16-hour waking day on a phone); the others deliver none, and a profile
// never sets a step's deliver_rate by itself (producers without a delivery
// target would refuse the step).
func TestProfileDeliveries(t *testing.T) {
	want := map[string]float64{"desktop": 121.0 / 28800, "mobile": 121.0 / 57600}
	for _, p := range messages.Profiles() {
		if got := p.DeliverPerAccount; got != want[p.Name] {
			t.Errorf("profile %s: DeliverPerAccount = %v deliveries/s, want %v", p.Name, got, want[p.Name])
		}
		c, err := messages.ParseStepCommand([]byte(`{"run":"r","step":1,"duration":"10s","rate":5,"profile":"` + p.Name + `"}`))
		if err != nil || c.Normalized().DeliverRate != 0 {
			t.Errorf("profile %s: step deliver_rate %v, error %v; want 0, nil", p.Name, c.Normalized().DeliverRate, err)
		}
	}
}
