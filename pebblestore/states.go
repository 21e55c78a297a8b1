package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/state"
)

// States is the state.Store on the s keys. Safe for concurrent use; it lives as long as its DB.
type States struct{ d *DB }

var _ state.Store = (*States)(nil)

// Get implements state.Store with one point lookup per fingerprint.
func (s *States) Get(ctx context.Context, fps []frontier.Fingerprint, out []state.Entry, found []bool) error {
	if len(out) < len(fps) || len(found) < len(fps) {
		return fmt.Errorf("pebblestore: states get: out and found hold %d and %d slots for %d fingerprints", len(out), len(found), len(fps))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(fps) >= sortedGetMin {
		return s.getSorted(fps, out, found)
	}
	key := make([]byte, 0, 33)
	for i, fp := range fps {
		key = append(append(key[:0], pfxState), fp...)
		v, closer, err := s.d.db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			out[i], found[i] = state.Entry{}, false
			continue
		}
		if err != nil {
			return fmt.Errorf("pebblestore: states get %x: %w", []byte(fp), err)
		}
		e, err := decodeState(v)
		closer.Close()
		if err != nil {
			return fmt.Errorf("pebblestore: states get %x: %w", []byte(fp), err)
		}
		out[i], found[i] = e, true
	}
	return nil
}

// Put implements state.Store: one batch, synced if Config.Sync.
func (s *States) Put(ctx context.Context, fps []frontier.Fingerprint, entries []state.Entry) error {
	if err := state.CheckPut(fps, entries); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(fps) == 0 {
		return nil
	}
	b := s.d.db.NewBatch()
	defer b.Close()
	for i, fp := range fps {
		v := stateValue(entries[i])
		op := b.SetDeferred(1+len(fp), len(v))
		op.Key[0] = pfxState
		copy(op.Key[1:], fp)
		copy(op.Value, v)
		op.Finish()
	}
	if err := b.Commit(s.d.wo); err != nil {
		return fmt.Errorf("pebblestore: states put: %w", err)
	}
	return nil
}

// sortedGetMin is the batch size from which Get sorts the keys and walks one iterator forward instead of
// making independent point lookups: Pebble then reuses its position in every level between nearby keys.
const sortedGetMin = 64

func (s *States) getSorted(fps []frontier.Fingerprint, out []state.Entry, found []bool) error {
	idx := make([]int, len(fps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(fps[a], fps[b]) })
	it, err := s.d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxState}, UpperBound: []byte{pfxState + 1}})
	if err != nil {
		return fmt.Errorf("pebblestore: states get: %w", err)
	}
	key := make([]byte, 0, 33)
	for _, i := range idx {
		key = append(append(key[:0], pfxState), fps[i]...)
		out[i], found[i] = state.Entry{}, false
		if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
			continue
		}
		v, err := it.ValueAndErr()
		if err == nil {
			out[i], err = decodeState(v)
		}
		if err != nil {
			return errors.Join(fmt.Errorf("pebblestore: states get %x: %w", []byte(fps[i]), err), it.Close())
		}
		found[i] = true
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("pebblestore: states get: %w", err)
	}
	return nil
}

// Count scans every state and returns how many URLs are in each state. It reads the whole table (about a
// second per few million URLs), so it is meant for a resumed crawl's opening line and for tools, not for a
// hot path.
func (s *States) Count(ctx context.Context) (map[frontier.State]int64, error) {
	it, err := s.d.db.NewIter(&pebble.IterOptions{LowerBound: []byte{pfxState}, UpperBound: []byte{pfxState + 1}})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: count states: %w", err)
	}
	out := map[frontier.State]int64{}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if v := it.Value(); len(v) > 0 {
			out[frontier.State(v[0])]++
		}
		if n++; n%65536 == 0 && ctx.Err() != nil {
			break
		}
	}
	if err := errors.Join(ctx.Err(), it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblestore: count states: %w", err)
	}
	return out, nil
}
