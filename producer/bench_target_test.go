package producer

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/imapload/imapload/messages"
	"github.com/imapload/imapload/recorder"
)

// benchTarget is the IMAP server a benchmark runs against: the Dovecot the
// environment names (IMAPLOAD_DOVECOT_ADDR etc., from deploy/dovecot/start.sh),
// the only clean way to measure the producer's CPU since the server is
// another process; or else the embedded server, in this process, whose CPU
// the measurement then includes.
type benchTarget struct {
	name      string // "dovecot" or "embedded": the first level of every benchmark name
	addr      string
	accts     []Account
	masterPID int // Dovecot's master process, 0 if unknown
}

func newBenchTarget(b *testing.B) *benchTarget {
	b.Helper()
	addr := os.Getenv("IMAPLOAD_DOVECOT_ADDR")
	if addr == "" {
		srv := startTestIMAP(b, nil)
		return &benchTarget{name: "embedded", addr: srv.Addr(), accts: benchAccounts(b, "user", 10, srv.Password())}
	}
	users, err := strconv.Atoi(os.Getenv("IMAPLOAD_DOVECOT_USERS"))
	if err != nil {
		b.Fatalf("IMAPLOAD_DOVECOT_USERS: %v", err)
	}
	accts := benchAccounts(b, os.Getenv("IMAPLOAD_DOVECOT_USER_PREFIX"), users, os.Getenv("IMAPLOAD_DOVECOT_PASSWORD"))
	return &benchTarget{name: "dovecot", addr: addr, accts: accts,
		masterPID: readPID(filepath.Join(os.Getenv("IMAPLOAD_DOVECOT_DIR"), "run", "master.pid"))}
}

func benchAccounts(b *testing.B, prefix string, n int, password string) []Account {
	b.Helper()
	accts, err := TemplateAccounts(prefix+"%d", n, password)
	if err != nil {
		b.Fatalf("TemplateAccounts() error = %v", err)
	}
	return accts
}

// env is a session environment against the target whose measurement window
// is open for the next hour, as newTestEnv's: every operation is recorded,
// so the recorder's cost is part of what is measured.
func (tg *benchTarget) env(b *testing.B) *sessionEnv {
	b.Helper()
	o := &Options{ID: "bench", Addr: tg.addr, Accounts: tg.accts, OpTimeout: 5 * time.Second}
	cfg, err := o.config()
	if err != nil {
		b.Fatalf("config() error = %v", err)
	}
	tl := timeline{start: time.Now().Add(-time.Millisecond), duration: time.Hour}
	rec := recorder.New("bench", 1, cfg.ID, messages.StepInfo{}, &recorder.Options{Seed: 1, Secrets: cfg.secrets})
	return newSessionEnv(cfg, tl, rec, cfg.Logger, 1)
}

// serverCPU is the CPU (user + system) Dovecot has used so far: its master
// process, the children it has reaped (the master's cutime and cstime) and
// its live children (imap-login, imap, auth, …, all forked by the master).
// ok is false without a Dovecot master to look at.
func (tg *benchTarget) serverCPU() (cpu time.Duration, ok bool) {
	if tg.masterPID == 0 {
		return 0, false
	}
	master, ok := procStat(tg.masterPID)
	if !ok {
		return 0, false
	}
	ticks := master.utime + master.stime + master.cutime + master.cstime
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == tg.masterPID {
			continue
		}
		if st, ok := procStat(pid); ok && st.ppid == int64(tg.masterPID) {
			ticks += st.utime + st.stime
		}
	}
	return time.Duration(ticks) * time.Second / userHZ, true
}

// userHZ is the unit of /proc/<pid>/stat times: fixed at 100 on Linux.
const userHZ = 100

type stat struct{ ppid, utime, stime, cutime, cstime int64 }

// procStat reads fields 4 (ppid) and 14–17 (times) of /proc/<pid>/stat.
func procStat(pid int) (stat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	// The command name (field 2) is in parentheses and may hold blanks.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(data[i+1:])) // f[0] is field 3
	if len(f) < 15 {
		return stat{}, false
	}
	n := func(k int) int64 { v, _ := strconv.ParseInt(f[k-3], 10, 64); return v }
	return stat{ppid: n(4), utime: n(14), stime: n(15), cutime: n(16), cstime: n(17)}, true
}

func readPID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}
