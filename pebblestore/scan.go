package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/state"
)

// Each calls fn with every state in the store, in fingerprint order, until fn returns an error (returned as
// is). It reads the whole table, so it is meant for end-of-crawl checks and tools (frontiertest's accounting
// check, the standalone's finish check), not for a hot path. fp is valid only during the call.
func (s *States) Each(ctx context.Context, fn func(fp frontier.Fingerprint, e state.Entry) error) error {
	it, err := s.d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxState}, UpperBound: []byte{pfxState + 1}})
	if err != nil {
		return fmt.Errorf("pebblestore: scan states: %w", err)
	}
	n := 0
	var ferr error
	for it.First(); it.Valid(); it.Next() {
		if n++; n%65536 == 0 && ctx.Err() != nil {
			break
		}
		e, err := decodeState(it.Value())
		if err != nil {
			ferr = fmt.Errorf("pebblestore: scan states: %x: %w", it.Key()[1:], err)
			break
		}
		if ferr = fn(frontier.Fingerprint(it.Key()[1:]), e); ferr != nil {
			break
		}
	}
	if err := errors.Join(ctx.Err(), it.Error(), it.Close()); err != nil {
		return fmt.Errorf("pebblestore: scan states: %w", err)
	}
	return ferr
}

// Has reports, for each fingerprint, whether the queue holds a row for it (due or not, in any partition).
func (q *Queue) Has(ctx context.Context, fps []frontier.Fingerprint) ([]bool, error) {
	out := make([]bool, len(fps))
	for i, fp := range fps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		key, err := q.lookup(fp)
		if err != nil {
			return nil, err
		}
		if key == nil {
			continue
		}
		_, closer, err := q.d.db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pebblestore: queue row %x: %w", bytes.Clone(key), err)
		}
		closer.Close()
		out[i] = true
	}
	return out, nil
}
