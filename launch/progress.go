package launch

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/frontiercrawl/frontier/crawlstatus"
)

// progressLine shows a crawl's progress: on a terminal, one line redrawn every second; otherwise a plain line
// every interval (logs and pipes get no carriage returns).
type progressLine struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	mu       sync.Mutex
	last     time.Time
	drawn    bool
}

func newProgressLine(f *os.File, interval time.Duration) *progressLine {
	return &progressLine{w: f, tty: isTerminal(f), interval: interval}
}

// isTerminal reports whether f is a character device (a terminal), without a terminal library.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func formatProgress(s crawlstatus.Status, elapsed time.Duration) string {
	return fmt.Sprintf("pages %d  %.1f pages/s  queued %d  in flight %d  errors %d  elapsed %s",
		s.Totals.Crawled, s.PagesPerSecond, s.Totals.Queued, s.Totals.InFlight, s.Totals.Errors, elapsed.Round(time.Second))
}

func (p *progressLine) update(s crawlstatus.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.tty {
		if now.Sub(p.last) < 500*time.Millisecond {
			return
		}
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K%s", formatProgress(s, s.Time.Sub(startTime)))
		p.drawn = true
		return
	}
	if p.last.IsZero() {
		p.last = now
	}
	if now.Sub(p.last) >= p.interval {
		fmt.Fprintf(p.w, "progress: %s\n", formatProgress(s, s.Time.Sub(startTime)))
		p.last = now
	}
}

// end finishes a drawn line so that the summary starts on its own line.
func (p *progressLine) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// startTime is when the process started; the progress line's elapsed time counts from it.
var startTime = time.Now()
