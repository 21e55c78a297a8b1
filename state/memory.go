package state

import (
	"context"
	"fmt"
	"sync"

	"github.com/frontiercrawl/frontier"
)

// Memory is a Store in a Go map, for unit tests and small crawls. Safe for concurrent use. It has nothing to
// close.
type Memory struct {
	mu sync.RWMutex
	m  map[string]Entry
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty memory store.
func NewMemory() *Memory { return &Memory{m: make(map[string]Entry)} }

// Get implements Store.
func (s *Memory) Get(ctx context.Context, fps []frontier.Fingerprint, out []Entry, found []bool) error {
	if err := checkGetArgs(fps, out, found); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, fp := range fps {
		out[i], found[i] = s.m[string(fp)]
	}
	return nil
}

// Put implements Store.
func (s *Memory) Put(ctx context.Context, fps []frontier.Fingerprint, entries []Entry) error {
	if err := checkPutArgs(fps, entries); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, fp := range fps {
		s.m[string(fp)] = entries[i]
	}
	return nil
}

// Len returns the number of stored fingerprints.
func (s *Memory) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.m)
}

func checkGetArgs(fps []frontier.Fingerprint, out []Entry, found []bool) error {
	if len(out) < len(fps) || len(found) < len(fps) {
		return fmt.Errorf("state: get: out and found hold %d and %d slots for %d fingerprints", len(out), len(found), len(fps))
	}
	return nil
}

// CheckPut validates the arguments of a Put: as many entries as fingerprints, no empty fingerprint, valid
// states. Store implementations call it so that every store rejects the same input.
func CheckPut(fps []frontier.Fingerprint, entries []Entry) error { return checkPutArgs(fps, entries) }

func checkPutArgs(fps []frontier.Fingerprint, entries []Entry) error {
	if len(entries) < len(fps) {
		return fmt.Errorf("state: put: %d entries for %d fingerprints", len(entries), len(fps))
	}
	for i, fp := range fps {
		if len(fp) == 0 {
			return fmt.Errorf("state: put: fingerprint %d is empty", i)
		}
		if !entries[i].State.Valid() {
			return fmt.Errorf("state: put: fingerprint %x: invalid %v", []byte(fp), entries[i].State)
		}
	}
	return nil
}
