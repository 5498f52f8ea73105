package reporter

import (
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/imapload/imapload/internal/testkit"
)

// Screenshot size, in CSS pixels (headless Chromium draws one pixel each).
const shotWidth, shotHeight = 1280, 2000

// chromium finds headless Chromium (testkit.Chromium): without it the
// test is skipped, or fails under IMAPLOAD_E2E=1.
func chromium(t *testing.T) string {
	t.Helper()
	return testkit.Require(t, testkit.Chromium)
}

// screenshot opens page in headless Chromium and returns the screenshot.
// The browser runs in its own process group with a private profile, and
// is killed, children and all, if it has not finished in a minute and a half.
func screenshot(t *testing.T, bin, page string) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	shot := filepath.Join(t.TempDir(), "shot.png")
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--window-size=1280,2000", "file://"+page)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s --screenshot: %v\n%s", bin, err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

// TestBrowserReport opens the report.html of a run with a knee (a range)
// in headless Chromium and reads the screenshot: the verdict banner, in the
// knee's colour, sits at the top; below it the plots are drawn (the
// delivered line's blue, the knee's red); the page is not blank.
func TestBrowserReport(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	if _, err := WriteFiles(dir, rangeReport()); err != nil {
		t.Fatalf("WriteFiles() error = %v", err)
	}
	img := screenshot(t, bin, filepath.Join(dir, "report.html"))
	if b := img.Bounds(); b.Dx() != shotWidth || b.Dy() != shotHeight {
		t.Fatalf("screenshot is %v, want %dx%d", b, shotWidth, shotHeight)
	}
	banner := region{0, 0, shotWidth, 400}
	kneeBanner := color.RGBA{R: 0xff, G: 0xe8, B: 0xcc, A: 0xff} // .v-knee.banner in html.tmpl
	if n := banner.count(img, kneeBanner); n < 50_000 {
		t.Errorf("top 400 px: %d pixels of the knee banner's colour %v, want a banner (≥ 50000)", n, kneeBanner)
	}
	if n := banner.count(img, color.RGBA{R: 0x21, G: 0x25, B: 0x29, A: 0xff}); n < 500 {
		t.Errorf("top 400 px: %d pixels of text colour, want the title and the verdict written", n)
	}
	plots := region{0, 300, shotWidth, shotHeight}
	for _, c := range []struct {
		what string
		c    color.Color
		min  int
	}{{"the delivered line (blue)", seriesColors[0], 300}, {"the knee (red)", kneeColor, 100}} {
		if n := plots.count(img, c.c); n < c.min {
			t.Errorf("below the banner: %d pixels of %s, want ≥ %d: are the plots drawn?", n, c.what, c.min)
		}
	}
	if n := plots.nonWhite(img); n < 100_000 {
		t.Errorf("below the banner: %d pixels that are not white, want the plots and the table (≥ 100000)", n)
	}
}

// region is a rectangle of a screenshot, x0 ≤ x < x1, y0 ≤ y < y1.
type region struct{ x0, y0, x1, y1 int }

// count is how many pixels of the region are within a few levels of c.
func (r region) count(img image.Image, c color.Color) int {
	want := color.RGBAModel.Convert(c).(color.RGBA)
	n := 0
	r.each(img, func(p color.RGBA) {
		if near(p.R, want.R) && near(p.G, want.G) && near(p.B, want.B) {
			n++
		}
	})
	return n
}

// nonWhite is how many pixels of the region are not (nearly) white.
func (r region) nonWhite(img image.Image) int {
	n := 0
	r.each(img, func(p color.RGBA) {
		if p.R < 0xf0 || p.G < 0xf0 || p.B < 0xf0 {
			n++
		}
	})
	return n
}

func (r region) each(img image.Image, f func(color.RGBA)) {
	b := img.Bounds()
	for y := b.Min.Y + r.y0; y < b.Min.Y+min(r.y1, b.Dy()); y++ {
		for x := b.Min.X + r.x0; x < b.Min.X+min(r.x1, b.Dx()); x++ {
			f(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA))
		}
	}
}

// near allows for a few levels of rounding in the browser's colours.
func near(a, b uint8) bool { return max(a, b)-min(a, b) <= 6 }
