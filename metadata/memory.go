package metadata

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/frontiercrawl/frontier"
)

// Merge applies the Put rule of Page to old (the stored record, or the zero Page): a non-zero field of p
// overwrites, a zero field keeps the old value, and FirstSeen is kept once set. Implementations call it so
// every store merges alike.
func Merge(old, p Page) Page {
	out := old
	out.Fingerprint = p.Fingerprint
	if p.URL != "" {
		out.URL = p.URL
	}
	if old.FirstSeen == 0 {
		out.FirstSeen = p.FirstSeen
	}
	if p.LastFetched != 0 {
		out.LastFetched = p.LastFetched
	}
	if p.Status != 0 {
		out.Status = p.Status
	}
	if p.Depth != 0 {
		out.Depth = p.Depth
	}
	if p.ContentType != "" {
		out.ContentType = p.ContentType
	}
	if p.Error != "" {
		out.Error = p.Error
	}
	if len(p.RedirectTo) != 0 {
		out.RedirectTo = slices.Clone(p.RedirectTo)
	}
	out.Fingerprint = slices.Clone(out.Fingerprint)
	return out
}

// CheckPages validates a Put batch: every page has a fingerprint.
func CheckPages(pages []Page) error {
	for i := range pages {
		if len(pages[i].Fingerprint) == 0 {
			return fmt.Errorf("metadata: put: page %d (%q) has no fingerprint", i, pages[i].URL)
		}
	}
	return nil
}

// CheckAdd validates the arguments of Domains.Add.
func CheckAdd(name string, domains []string, delta []int64) error {
	if name == "" {
		return fmt.Errorf("metadata: add: counter name is empty")
	}
	if len(delta) != len(domains) {
		return fmt.Errorf("metadata: add %s: %d deltas for %d domains", name, len(delta), len(domains))
	}
	return nil
}

// Memory is a Store in a Go map, for unit tests. Safe for concurrent use; nothing to close.
type Memory struct {
	mu    sync.Mutex
	pages map[string]Page
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty memory store.
func NewMemory() *Memory { return &Memory{pages: make(map[string]Page)} }

// MemoryDomains is Domains in Go maps, for unit tests. Safe for concurrent use; nothing to close.
type MemoryDomains struct {
	mu       sync.Mutex
	counters map[string]map[string]int64
	applied  map[string]map[string]map[string]int64 // name → domain → source → highest Seq applied
}

var _ ExactDomains = (*MemoryDomains)(nil)

// NewMemoryDomains returns empty memory counters.
func NewMemoryDomains() *MemoryDomains {
	return &MemoryDomains{counters: make(map[string]map[string]int64), applied: make(map[string]map[string]map[string]int64)}
}

// Put implements Store.
func (m *Memory) Put(ctx context.Context, pages []Page) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckPages(pages); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range pages {
		m.pages[string(p.Fingerprint)] = Merge(m.pages[string(p.Fingerprint)], p)
	}
	return nil
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, fp frontier.Fingerprint) (Page, bool, error) {
	if err := ctx.Err(); err != nil {
		return Page{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pages[string(fp)]
	if ok {
		p.Fingerprint = slices.Clone(p.Fingerprint)
		p.RedirectTo = slices.Clone(p.RedirectTo)
	}
	return p, ok, nil
}

// Add implements Domains.
func (m *MemoryDomains) Add(ctx context.Context, name string, domains []string, delta []int64) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckAdd(name, domains, delta); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.countersLocked(name)
	out := make([]int64, len(domains))
	for i, d := range domains {
		c[d] += delta[i]
		out[i] = c[d]
	}
	return out, nil
}

// countersLocked returns the counters of name, created empty if absent; m.mu is held.
func (m *MemoryDomains) countersLocked(name string) map[string]int64 {
	c := m.counters[name]
	if c == nil {
		c = make(map[string]int64)
		m.counters[name] = c
	}
	return c
}

// Get implements Domains.
func (m *MemoryDomains) Get(ctx context.Context, name string, domains []string) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int64, len(domains))
	for i, d := range domains {
		out[i] = m.counters[name][d]
	}
	return out, nil
}

// AddOnce implements ExactDomains.
func (m *MemoryDomains) AddOnce(ctx context.Context, name string, tallies []Tally) ([]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckTallies(name, tallies); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.countersLocked(name)
	ap := m.applied[name]
	if ap == nil {
		ap = make(map[string]map[string]int64)
		m.applied[name] = ap
	}
	order, groups := ByDomain(tallies)
	for _, d := range order {
		delta, seqs := Pending(groups[d], ap[d])
		c[d] += delta
		if ap[d] == nil {
			ap[d] = make(map[string]int64)
		}
		for src, s := range seqs {
			ap[d][src] = s
		}
	}
	out := make([]int64, len(tallies))
	for i, t := range tallies {
		out[i] = c[t.Domain]
	}
	return out, nil
}
