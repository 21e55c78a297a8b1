package queue

import (
	"fmt"
	"math"
	"strings"
)

// Check validates one item as Schedule must: a partition ≥ 0, a fingerprint, a score in [0, 1] (NaN is out of
// range), a host without NUL bytes, NotBefore ≥ 0. Implementations call it so that every queue rejects the same
// items.
func Check(it *Item) error {
	switch {
	case math.IsNaN(it.Score) || it.Score < 0 || it.Score > 1:
		return fmt.Errorf("%w: %v", ErrScoreRange, it.Score)
	case it.Partition < 0:
		return fmt.Errorf("queue: partition %d is negative", it.Partition)
	case len(it.Fingerprint) == 0:
		return fmt.Errorf("queue: item has no fingerprint")
	case strings.IndexByte(it.Host, 0) >= 0:
		return fmt.Errorf("queue: host %q holds a NUL byte", it.Host)
	case it.NotBefore < 0:
		return fmt.Errorf("queue: not_before %d is negative", it.NotBefore)
	}
	return nil
}

// Picker builds one Next batch from due candidates offered best first. It applies Limits the same way in every
// implementation:
//
//   - a candidate whose host already has PerHost items (HostCap(host) when HostCap is set) is skipped (it stays
//     queued);
//   - until Max items are taken, every other candidate is taken;
//   - once Max items are taken but fewer than min(MinHosts, Max) hosts are represented, a candidate of a new host
//     replaces the worst taken item of a host that has more than one, so the batch spreads over more hosts
//     without growing;
//   - Done reports when nothing offered later can change the batch.
//
// A Picker is not safe for concurrent use.
type Picker struct {
	lim     Limits
	items   []Item
	perHost map[string]int
	caps    map[string]int // Limits.HostCap's answers, asked once per host
}

// NewPicker returns a Picker for one Next call.
func NewPicker(lim Limits) *Picker {
	return &Picker{lim: lim, perHost: make(map[string]int)}
}

func (p *Picker) minHosts() int { return min(p.lim.MinHosts, p.lim.Max) }

func (p *Picker) full() bool { return len(p.items) >= p.lim.Max }

// Wants reports whether a candidate of host could be taken now. A caller that scans rows grouped by host may
// skip the rest of a host's group when Wants is false.
func (p *Picker) Wants(host string) bool {
	c := 0
	if p.lim.HostCap != nil {
		var ok bool
		if c, ok = p.caps[host]; !ok {
			c = p.askCap(host)
		}
	}
	return p.allows(p.perHost[host], c)
}

// WantsBytes is Wants for a host held as bytes (a queue key's), without making its string but for the
// first HostCap call of the host: a scan asks once per row it offers and once per host group it passes over.
func (p *Picker) WantsBytes(host []byte) bool {
	c := 0
	if p.lim.HostCap != nil {
		var ok bool
		if c, ok = p.caps[string(host)]; !ok {
			c = p.askCap(string(host))
		}
	}
	return p.allows(p.perHost[string(host)], c)
}

// allows reports whether a host holding n items of the batch, whose HostCap is hostCap (when Limits has one),
// may have one more.
func (p *Picker) allows(n, hostCap int) bool {
	if p.lim.HostCap != nil {
		if n >= hostCap {
			return false
		}
	} else if p.lim.PerHost > 0 && n >= p.lim.PerHost {
		return false
	}
	return p.room(n)
}

// askCap asks Limits.HostCap for host's cap and remembers it.
func (p *Picker) askCap(host string) int {
	c := p.lim.HostCap(host)
	if p.caps == nil {
		p.caps = make(map[string]int)
	}
	p.caps[host] = c
	return c
}

// room reports whether the batch has room for a candidate of a host holding n of its items.
func (p *Picker) room(n int) bool {
	if p.full() {
		return n == 0 && len(p.perHost) < p.minHosts() && len(p.perHost) < len(p.items)
	}
	return true
}

// Offer considers one due candidate, offered in best-first order, and reports whether it was taken.
func (p *Picker) Offer(it Item) bool {
	if p.lim.Max <= 0 || !p.Wants(it.Host) {
		return false
	}
	if p.full() {
		// Replace the worst item of a host that has more than one.
		j := len(p.items) - 1
		for ; j >= 0 && p.perHost[p.items[j].Host] < 2; j-- {
		}
		if j < 0 {
			return false
		}
		p.perHost[p.items[j].Host]--
		p.items = append(p.items[:j], p.items[j+1:]...)
	}
	p.items = append(p.items, it)
	p.perHost[it.Host]++
	return true
}

// Done reports whether the batch is final: Max items over at least min(MinHosts, Max) hosts, or Max items
// from distinct hosts.
func (p *Picker) Done() bool {
	return p.full() && (len(p.perHost) >= p.minHosts() || len(p.perHost) >= len(p.items))
}

// Items returns the batch, best first.
func (p *Picker) Items() []Item { return p.items }
