package seed

import (
	"errors"
	"reflect"
	"testing"
)

func TestFoldersTargets(t *testing.T) {
	tests := []struct {
		name, in string
		messages int
		want     []Target
		err      error
	}{
		{name: "default", in: DefaultFolders, messages: 1000,
			want: []Target{{"INBOX", 700}, {"Archive", 200}, {"Sent", 100}}},
		{name: "equal shares, remainders", in: "INBOX,Archive,Sent", messages: 10,
			want: []Target{{"INBOX", 4}, {"Archive", 3}, {"Sent", 3}}},
		{name: "a count of its own", in: "INBOX, Sent=25", messages: 10,
			want: []Target{{"INBOX", 10}, {"Sent", 25}}},
		{name: "counts only", in: "Sent=3", messages: 10, want: []Target{{"Sent", 3}}},
		{name: "nested name", in: "Archive/2024:1", messages: 2, want: []Target{{"Archive/2024", 2}}},
		{name: "twice", in: "INBOX,inbox", err: ErrBadFolders},
		{name: "empty name", in: "INBOX,", err: ErrBadFolders},
		{name: "wildcard", in: "Arch*", err: ErrBadFolders},
		{name: "bad share", in: "INBOX:0", err: ErrBadFolders},
		{name: "bad count", in: "INBOX=-1", err: ErrBadFolders},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := ParseFolders(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("ParseFolders(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			if err != nil {
				return
			}
			if got := fs.Targets(tt.messages); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Targets(%d) = %v, want %v", tt.messages, got, tt.want)
			}
		})
	}
}
