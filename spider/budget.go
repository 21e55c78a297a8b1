package spider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultBodyBudgetBytes is Config.BodyBudgetBytes when it is 0 and the process sets no budget of its own
// (Deps.BodyBudget): 64 MiB, room for eight bodies of the default MaxBodyBytes at once, or a thousand fetches'
// first 64 KiB.
const DefaultBodyBudgetBytes = 64 << 20

// BodyBudget is a budget of response-body bytes in memory that several spiders of one process share
// (Deps.BodyBudget): the standalone gives all its spiders one, so the process's bodies are bounded once, not
// per spider. Safe for concurrent use.
type BodyBudget struct{ b *byteBudget }

// NewBodyBudget returns a budget of n bytes (DefaultBodyBudgetBytes when n <= 0).
func NewBodyBudget(n int64) *BodyBudget {
	if n <= 0 {
		n = DefaultBodyBudgetBytes
	}
	return &BodyBudget{b: newByteBudget(n)}
}

// Bytes is the budget's size.
func (b *BodyBudget) Bytes() int64 { return b.b.max }

// InUse is what the bodies hold now; HighWater the most they held at once.
func (b *BodyBudget) InUse() int64     { return b.b.inUse() }
func (b *BodyBudget) HighWater() int64 { return b.b.highWater() }

// byteBudget is the global budget of response-body bytes held in memory (Config.BodyBudgetBytes): a
// semaphore counted in bytes. A fetch reserves what it keeps in memory before keeping it and releases it once
// the outcome is reported, so the bodies held at once never exceed the budget, however many fetches are in
// flight and however large the pages.
//
// Deadlock freedom: acquire (which waits) is only called by a holder of nothing; a holder that needs more
// uses tryAcquire and, refused, spills to a file instead of waiting (bodyBuffer).
type byteBudget struct {
	mu   sync.Mutex
	max  int64
	used int64
	high int64         // high-water mark of used
	wake chan struct{} // closed and replaced at every release

	spills atomic.Int64 // bodies moved to a spill file
}

// registerBudgetMetrics exports the budget's use, high-water mark and spills.
func registerBudgetMetrics(reg prometheus.Registerer, b *byteBudget) {
	if reg == nil {
		return
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_spider_body_bytes_in_memory",
			Help: "Response-body bytes the process's spiders hold in memory now, under body_budget_bytes."}, func() float64 { return float64(b.inUse()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "frontier_spider_body_bytes_in_memory_max",
			Help: "The most response-body bytes held in memory at once since the start."}, func() float64 { return float64(b.highWater()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "frontier_spider_body_spills_total",
			Help: "Response bodies moved to a temporary file (past spill_bytes, or no room in body_budget_bytes)."},
			func() float64 { return float64(b.spills.Load()) }),
	)
}

func newByteBudget(max int64) *byteBudget {
	return &byteBudget{max: max, wake: make(chan struct{})}
}

// clamp caps a request at the whole budget, so that one body larger than the budget can still be processed
// (alone).
func (b *byteBudget) clamp(n int64) int64 { return max(0, min(n, b.max)) }

// acquire reserves n bytes (capped at the budget), waiting until they are free; it returns the bytes
// reserved, or ctx's error. The caller must hold no reservation.
func (b *byteBudget) acquire(ctx context.Context, n int64) (int64, error) {
	n = b.clamp(n)
	for {
		b.mu.Lock()
		if b.used+n <= b.max {
			b.take(n)
			b.mu.Unlock()
			return n, nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-wake:
		}
	}
}

// tryAcquire reserves n bytes if they are free now.
func (b *byteBudget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.take(n)
	return true
}

func (b *byteBudget) take(n int64) {
	b.used += n
	b.high = max(b.high, b.used)
}

func (b *byteBudget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.used < 0 {
		b.used = 0 // a bug, but never let the budget grow past its configuration
	}
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// inUse and highWater are for the metrics and tests.
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *byteBudget) highWater() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.high
}

// bodyGrain is the step in which a body's memory reservation grows, so the budget's lock is taken once per
// few reads, not per read.
const bodyGrain = 16 << 10

// sniffLen is how many leading body bytes are kept for content sniffing (http.DetectContentType reads 512).
const sniffLen = 512

// bodyBuffer receives a response body. It keeps the body in memory, reserved from the budget, up to the spill
// threshold; past it, or when the budget refuses more, it moves the body to a temporary file in dir and writes
// the rest there, holding no memory for it. head keeps the first bytes for content sniffing either way.
//
// With stream set (nothing reads the body after the fetch: see Config.SpillBytes), it does not spill: the
// first Write past the threshold keeps its bytes in pending and fails with errStreamBody, and the caller reads
// the rest of the body straight into the link parser and the digest (fetcher.streamBody).
type bodyBuffer struct {
	ctx       context.Context
	budget    *byteBudget
	threshold int64
	dir       string
	stream    bool
	buf       []byte
	pending   []byte // stream mode: the Write that crossed the threshold
	reserved  int64
	file      *os.File
	n         int64 // bytes written
	head      []byte
}

// errStreamBody ends a stream-mode bodyBuffer's io.Copy at the threshold (see bodyBuffer).
var errStreamBody = errors.New("spider: body past the spill threshold, to be streamed")

func (w *bodyBuffer) Write(p []byte) (int, error) {
	if len(w.head) < sniffLen {
		w.head = append(w.head, p[:min(len(p), sniffLen-len(w.head))]...)
	}
	w.n += int64(len(p))
	if w.file != nil {
		return w.file.Write(p)
	}
	if w.pending != nil {
		return 0, errStreamBody
	}
	size := int64(len(w.buf) + len(p))
	if size > w.threshold {
		return w.overflow(p)
	}
	if need := size - w.reserved; need > 0 {
		grow := (need + bodyGrain - 1) / bodyGrain * bodyGrain
		grow = min(grow, max(w.threshold-w.reserved, need))
		switch {
		case w.reserved == 0:
			got, err := w.budget.acquire(w.ctx, grow)
			if err != nil {
				return 0, err
			}
			w.reserved = got
			if got < need { // the whole budget is smaller than this body: keep it on disk
				return w.overflow(p)
			}
		case w.budget.tryAcquire(grow):
			w.reserved += grow
		default:
			return w.overflow(p) // never wait while holding memory: spill instead
		}
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// overflow is where a body stops fitting in memory: it spills, or in stream mode keeps p aside and stops
// the copy.
func (w *bodyBuffer) overflow(p []byte) (int, error) {
	if !w.stream {
		return len(p), w.spill(p)
	}
	w.pending = append(make([]byte, 0, len(p)), p...)
	return len(p), errStreamBody
}

// spill moves the body so far, and p, to a new temporary file and releases the memory reservation.
func (w *bodyBuffer) spill(p []byte) error {
	f, err := os.CreateTemp(w.dir, "frontier-body-*")
	if err != nil {
		return fmt.Errorf("spider: spill a large body to %s: %w", w.dir, err)
	}
	w.budget.spills.Add(1)
	_ = os.Remove(f.Name()) // unlinked at once: the space is freed when the file is closed, even after a crash
	w.file = f
	if _, err := f.Write(w.buf); err != nil {
		return err
	}
	w.buf = nil
	w.budget.release(w.reserved)
	w.reserved = 0
	_, err = f.Write(p)
	return err
}

// finish hands the body to out: in memory (out.Body, with its reservation), or spilled (out.spill).
func (w *bodyBuffer) finish(out *Fetched) {
	out.held = w.reserved
	out.budget = w.budget
	if w.file != nil {
		out.spill, out.spillSize = w.file, w.n
		return
	}
	out.Body = w.buf
}

// discard frees what the buffer holds (on an error before finish).
func (w *bodyBuffer) discard() {
	if w.file != nil {
		_ = w.file.Close()
		w.file = nil
	}
	w.budget.release(w.reserved)
	w.reserved, w.buf = 0, nil
}

// loadBody brings a spilled body back into memory for the parser, the handler and the digest, under the
// budget: the fetch first gives back what it holds, then waits for the whole body's size, so at most the
// budget's worth of bodies is in memory at once.
func (f *Fetched) loadBody(ctx context.Context) error {
	if f.spill == nil {
		return nil
	}
	f.budget.release(f.held)
	f.held = 0
	got, err := f.budget.acquire(ctx, f.spillSize)
	if err != nil {
		return err
	}
	f.held = got
	body := make([]byte, f.spillSize)
	if _, err := f.spill.ReadAt(body, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("spider: read a spilled body back: %w", err)
	}
	_ = f.spill.Close()
	f.spill = nil
	f.Body = body
	return nil
}

// contentDigest is bodyDigest of the (decoded) body: computed while it streamed in, or now.
func (f *Fetched) contentDigest() string {
	if f.digestHex != "" {
		return f.digestHex
	}
	return bodyDigest(f.Body)
}

// releaseBody frees the body's memory reservation and spill file. The handler has returned by then; a
// handler that keeps the body (allowed) keeps memory the budget no longer counts.
func (f *Fetched) releaseBody() {
	if f == nil {
		return
	}
	if f.spill != nil {
		_ = f.spill.Close()
		f.spill = nil
	}
	if f.budget != nil {
		f.budget.release(f.held)
	}
	f.held = 0
}
