package reporter

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFilesHonoursUmask writes the report under two umasks: the files
// and the directory get the modes the umask allows, never more (a private
// umask keeps a report private) and never less.
func TestWriteFilesHonoursUmask(t *testing.T) {
	tests := []struct {
		name              string
		umask             int
		wantDir, wantFile fs.FileMode
	}{
		{name: "private", umask: 0o077, wantDir: 0o700, wantFile: 0o600},
		{name: "usual", umask: 0o022, wantDir: 0o755, wantFile: 0o644},
		{name: "group", umask: 0o002, wantDir: 0o775, wantFile: 0o664},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := syscall.Umask(tt.umask)
			t.Cleanup(func() { syscall.Umask(old) })
			dir := filepath.Join(t.TempDir(), "run")
			paths, err := WriteFiles(dir, oldReport())
			if err != nil {
				t.Fatalf("WriteFiles() error = %v", err)
			}
			checkMode(t, dir, tt.wantDir)
			for _, p := range paths {
				checkMode(t, p, tt.wantFile)
			}
		})
	}
}

func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("WriteFiles() %s mode = %v, want %v", filepath.Base(path), got, want)
	}
}
