package aggregator

import "testing"

// TestResultSessionRate: every result reports sessions (successful LOGINs
// in the window) per second beside commands per second, and a scripted
// step its offered sessions per second and its script.
func TestResultSessionRate(t *testing.T) {
	batches := stepBatches("r1", 1, []string{"a", "b"}, 2) // one LOGIN per producer per cut, over 1 s
	cmd := stepCommand("r1", 1)
	cmd.Script = "login select fetch store logout"
	p := NewCommandPool(cmd, nil)
	for _, b := range batches {
		if _, err := p.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	r := p.Result()
	if r.SessionRate != 4 || r.TargetSessionRate != 25 || r.Script != "login select fetch store logout" {
		t.Errorf("sessions/s %v of %v, script %q; want 4 of 25 (100 commands/s ÷ 4), %q",
			r.SessionRate, r.TargetSessionRate, r.Script, cmd.Script)
	}
	if r := commandPool(t, batches).Result(); r.SessionRate != 4 || r.TargetSessionRate != 0 || r.Script != "" {
		t.Errorf("a step of a mix: sessions/s %v of %v, script %q; want 4 of 0, none", r.SessionRate, r.TargetSessionRate, r.Script)
	}
}
