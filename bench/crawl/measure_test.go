package crawl

import (
	"bufio"
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/frontiercrawl/frontier/internal/cputime"
)

// meter measures one crawl of this process: wall time, CPU time (getrusage user+sys) and the peak resident
// set, sampled every 50 ms from /proc/self/status (getrusage's maxrss covers the process's whole life, which
// includes the tests before this one).
type meter struct {
	start   time.Time
	cpu0    time.Duration
	peakRSS atomic.Int64
	// goObjects and goTotal are the Go runtime's own memory (heap objects, and everything the runtime mapped) when the
	// peak was sampled: RSS beyond the latter is memory outside Go's heap (Pebble's C-allocated block cache).
	goObjects, goTotal atomic.Int64
	stop               chan struct{}
	wg                 sync.WaitGroup
	load               string
}

func startMeter() *meter {
	m := &meter{start: time.Now(), cpu0: cputime.Process(), stop: make(chan struct{}), load: loadAvg()}
	m.peakRSS.Store(rss())
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				if r := rss(); r > m.peakRSS.Load() {
					m.peakRSS.Store(r)
					objs, total := goMemory()
					m.goObjects.Store(objs)
					m.goTotal.Store(total)
				}
			}
		}
	}()
	return m
}

// done stops sampling and returns the CPU used since start.
func (m *meter) done() (cpu time.Duration) {
	close(m.stop)
	m.wg.Wait()
	return cputime.Process() - m.cpu0
}

// goMemory returns the bytes of live and not yet swept heap objects, and all the memory the Go runtime has
// mapped (heap, stacks, its own structures), from runtime/metrics (no stop-the-world).
func goMemory() (objects, total int64) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	metrics.Read(samples)
	return int64(samples[0].Value.Uint64()), int64(samples[1].Value.Uint64())
}

// rss is the resident set of this process in bytes (0 where /proc is missing).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) >= 2 && string(f[0]) == "VmRSS:" {
			kb, _ := strconv.ParseInt(string(f[1]), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// loadAvg is the 1-minute load average, as /proc/loadavg gives it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return "?"
	}
	return string(f[0]) + " " + string(f[1]) + " " + string(f[2])
}

// counter sums the values of the counters named name in reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			}
		}
	}
	return sum
}

// histogram returns the count and the quantiles q of the histogram named name in reg, interpolated in its
// buckets.
func histogram(t *testing.T, reg *prometheus.Registry, name string, qs ...float64) (uint64, []float64) {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		n := h.GetSampleCount()
		out := make([]float64, len(qs))
		for i, q := range qs {
			want := q * float64(n)
			prevB, prevC := 0.0, 0.0
			out[i] = -1
			for _, b := range h.GetBucket() {
				c := float64(b.GetCumulativeCount())
				if c >= want && c > prevC {
					out[i] = prevB + (b.GetUpperBound()-prevB)*(want-prevC)/(c-prevC)
					break
				}
				prevB, prevC = b.GetUpperBound(), c
			}
		}
		return n, out
	}
	return 0, nil
}

// reportMem logs one result line in the form bench/results/throughput.md records.
func reportMem(t *testing.T, goMem *meter, what string, pages int64, wall, cpu time.Duration, peak int64, load string, extra ...any) {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	rate := float64(pages) / wall.Seconds()
	perK := cpu.Seconds() / float64(max(pages, 1)) * 1000
	_, _ = w.WriteString(what)
	_, _ = w.WriteString(": ")
	_, _ = w.WriteString(strconv.FormatInt(pages, 10) + " pages in " + wall.Round(time.Millisecond).String())
	_, _ = w.WriteString(" = " + strconv.FormatFloat(rate, 'f', 0, 64) + " pages/s; CPU " + cpu.Round(time.Millisecond).String())
	_, _ = w.WriteString(" = " + strconv.FormatFloat(perK, 'f', 3, 64) + " CPU-s per 1,000 pages")
	_, _ = w.WriteString("; peak RSS " + strconv.FormatInt(peak>>20, 10) + " MiB; load " + load)
	if goMem != nil {
		_, _ = w.WriteString("; at the peak: Go heap objects " + strconv.FormatInt(goMem.goObjects.Load()>>20, 10) +
			" MiB, Go runtime total " + strconv.FormatInt(goMem.goTotal.Load()>>20, 10) + " MiB")
	}
	for i := 0; i+1 < len(extra); i += 2 {
		_, _ = w.WriteString("; ")
		_, _ = w.WriteString(extra[i].(string))
		_, _ = w.WriteString(" ")
		switch v := extra[i+1].(type) {
		case string:
			_, _ = w.WriteString(v)
		case float64:
			_, _ = w.WriteString(strconv.FormatFloat(v, 'f', 3, 64))
		case int64:
			_, _ = w.WriteString(strconv.FormatInt(v, 10))
		case int:
			_, _ = w.WriteString(strconv.Itoa(v))
		}
	}
	_ = w.Flush()
	t.Log(b.String())
	if p := os.Getenv("FRONTIER_BENCH_OUT"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = f.WriteString(time.Now().UTC().Format(time.RFC3339) + " " + b.String() + "\n")
			_ = f.Close()
		}
	}
}
