package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestApplyEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    map[string]string // flag values after applyEnv
		wantErr string
	}{
		{name: "nothing set", want: map[string]string{"rate": "0", "run": "", "accounts-count": "100", "step-duration": "10s"}},
		{
			name: "unset flags from the environment",
			env:  map[string]string{"IMAPLOAD_RATE": "250", "IMAPLOAD_RUN": "r9", "IMAPLOAD_ACCOUNTS_COUNT": "7", "IMAPLOAD_STEP_DURATION": "3s"},
			want: map[string]string{"rate": "250", "run": "r9", "accounts-count": "7", "step-duration": "3s"},
		},
		{
			name: "given flags win",
			env:  map[string]string{"IMAPLOAD_RATE": "250", "IMAPLOAD_RUN": "r9"},
			args: []string{"--rate", "300"},
			want: map[string]string{"rate": "300", "run": "r9"},
		},
		{
			name: "empty value is a value",
			env:  map[string]string{"IMAPLOAD_RUN": ""},
			want: map[string]string{"run": ""},
		},
		{
			name: "lower case names are not read",
			env:  map[string]string{"imapload_rate": "250", "IMAPLOAD_Rate": "250"},
			want: map[string]string{"rate": "0"},
		},
		{name: "bad number", env: map[string]string{"IMAPLOAD_ACCOUNTS_COUNT": "many"}, wantErr: `IMAPLOAD_ACCOUNTS_COUNT="many"`},
		{name: "bad duration", env: map[string]string{"IMAPLOAD_STEP_DURATION": "3"}, wantErr: `IMAPLOAD_STEP_DURATION="3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			fs := testFlags()
			if err := fs.Parse(tt.args); err != nil {
				t.Fatalf("Parse(%v) = %v", tt.args, err)
			}
			err := applyEnv(fs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("applyEnv() = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("applyEnv() = %v", err)
			}
			for _, name := range slices.Sorted(maps.Keys(tt.want)) {
				if got := fs.Lookup(name).Value.String(); got != tt.want[name] {
					t.Errorf("after applyEnv --%s = %q, want %q", name, got, tt.want[name])
				}
			}
		})
	}
}

func testFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.Float64("rate", 0, "")
	fs.String("run", "", "")
	fs.Int("accounts-count", 100, "")
	fs.Duration("step-duration", 10*time.Second, "")
	return fs
}

func TestParseMix(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]float64
		wantErr string
	}{
		{name: "empty means no override", in: "", want: nil},
		{name: "one", in: "fetch=1", want: map[string]float64{"fetch": 1}},
		{name: "several with spaces", in: "fetch=130, select=100 ,list=50", want: map[string]float64{"fetch": 130, "select": 100, "list": 50}},
		{name: "zero weight beside a positive one", in: "fetch=1,append=0", want: map[string]float64{"fetch": 1, "append": 0}},
		{name: "no weight", in: "fetch", wantErr: `"fetch": want name=weight`},
		{name: "not a number", in: "fetch=lots", wantErr: "want name=weight"},
		{name: "empty part", in: "fetch=1,", wantErr: "want name=weight"},
		{name: "unknown phase", in: "fetch=1,delete=2", wantErr: "delete"},
		{name: "set-up phase", in: "dial=1", wantErr: "session set-up"},
		{name: "negative", in: "fetch=-1", wantErr: "finite number ≥ 0"},
		{name: "not finite", in: "fetch=NaN", wantErr: "finite number ≥ 0"},
		{name: "all zero", in: "fetch=0,select=0", wantErr: "no positive weight"},
		{name: "repeated phase", in: "fetch=1,fetch=2", wantErr: `"fetch" given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMix(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseMix(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("parseMix(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseRates(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []float64
		wantErr string
	}{
		{name: "empty means the doubling ramp", in: "", want: nil},
		{name: "list", in: "200,400,800", want: []float64{200, 400, 800}},
		{name: "spaces and fractions", in: " 0.5 , 1e3", want: []float64{0.5, 1000}},
		{name: "zero", in: "200,0", wantErr: `"0" is not a rate`},
		{name: "negative", in: "-1", wantErr: "not a rate"},
		{name: "word", in: "fast", wantErr: "not a rate"},
		{name: "empty part", in: "200,,400", wantErr: `"" is not a rate`},
		{name: "absurd", in: "1e8", wantErr: "not a rate"},
		{name: "infinite", in: "Inf", wantErr: "not a rate"},
		{name: "not a number", in: "NaN", wantErr: "not a rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRates(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseRates(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("parseRates(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}
