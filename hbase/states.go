package hbase

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/state"
)

// States is the state.Store on the states table. Safe for concurrent use; it borrows the Client, which its
// creator closes.
type States struct {
	c     *Client
	table []byte
	name  string
}

var _ state.Store = (*States)(nil)

// States returns the state store.
func (c *Client) States() *States {
	n := c.cfg.table(statesTable)
	return &States{c: c, table: []byte(n), name: n}
}

// Get reads the entries of fps in chunks of Config.GetBatch rows, the chunks in parallel.
func (s *States) Get(ctx context.Context, fps []frontier.Fingerprint, out []state.Entry, found []bool) error {
	if len(out) < len(fps) || len(found) < len(fps) {
		return fmt.Errorf("hbase: states get: out and found hold %d and %d slots for %d fingerprints", len(out), len(found), len(fps))
	}
	cols := []*thrift2.TColumn{{Family: famState, Qualifier: qualState}}
	return s.c.chunks(ctx, len(fps), s.c.cfg.GetBatch, func(ctx context.Context, lo, hi int) error {
		gets := make([]*thrift2.TGet, hi-lo)
		for i := range gets {
			gets[i] = &thrift2.TGet{Row: fps[lo+i], Columns: cols}
		}
		var res []*thrift2.TResult_
		err := s.c.do(ctx, "getMultiple "+s.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
			res, err = svc.GetMultiple(ctx, s.table, gets)
			return err
		})
		if err != nil {
			return err
		}
		if len(res) != len(gets) {
			return fmt.Errorf("hbase: getMultiple %s returned %d results for %d rows", s.name, len(res), len(gets))
		}
		for i, r := range res {
			out[lo+i], found[lo+i] = state.Entry{}, false
			if v := cellValue(r, famState, qualState); v != nil {
				e, err := decodeStateValue(v)
				if err != nil {
					return fmt.Errorf("hbase: %s row %x: %w", s.name, fps[lo+i], err)
				}
				out[lo+i], found[lo+i] = e, true
			}
		}
		return nil
	})
}

// Put writes the entries in chunks of Config.PutBatch rows.
func (s *States) Put(ctx context.Context, fps []frontier.Fingerprint, entries []state.Entry) error {
	if err := state.CheckPut(fps, entries); err != nil {
		return fmt.Errorf("hbase: %w", err)
	}
	// A fingerprint twice in one batch: the later entry wins, even when chunks run in parallel.
	if last := lastIndex(fps); len(last) < len(fps) {
		var dfps []frontier.Fingerprint
		var des []state.Entry
		for i, fp := range fps {
			if last[string(fp)] == i {
				dfps, des = append(dfps, fp), append(des, entries[i])
			}
		}
		fps, entries = dfps, des
	}
	return s.c.chunks(ctx, len(fps), s.c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
		puts := make([]*thrift2.TPut, hi-lo)
		for i := range puts {
			puts[i] = &thrift2.TPut{Row: fps[lo+i], ColumnValues: []*thrift2.TColumnValue{
				{Family: famState, Qualifier: qualState, Value: stateValue(entries[lo+i])},
			}}
		}
		return s.c.putMultiple(ctx, s.name, s.table, puts)
	})
}

// cellValue returns the value of family:qualifier in r, or nil.
func cellValue(r *thrift2.TResult_, fam, qual []byte) []byte {
	if r == nil {
		return nil
	}
	for _, cv := range r.ColumnValues {
		if string(cv.Family) == string(fam) && string(cv.Qualifier) == string(qual) {
			if cv.Value == nil {
				return []byte{}
			}
			return cv.Value
		}
	}
	return nil
}

// chunks runs fn over [0, n) in pieces of size, at most PoolSize at a time.
func (c *Client) chunks(ctx context.Context, n, size int, fn func(ctx context.Context, lo, hi int) error) error {
	if n == 0 {
		return nil
	}
	if n <= size {
		return fn(ctx, 0, n)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.PoolSize)
	for lo := 0; lo < n; lo += size {
		hi := min(lo+size, n)
		g.Go(func() error { return fn(ctx, lo, hi) })
	}
	return g.Wait()
}

// putMultiple writes puts, fenced (doFenced): every put the stores make is for partitions the writer owns
// (states, pages, queue rows).
func (c *Client) putMultiple(ctx context.Context, name string, table []byte, puts []*thrift2.TPut) error {
	if len(puts) == 0 {
		return nil
	}
	return c.doFenced(ctx, "putMultiple "+name, func(ctx context.Context, svc thrift2.THBaseService) error {
		return svc.PutMultiple(ctx, table, puts)
	})
}

// deleteMultiple deletes rows; fenced says whether the write is fenced (doFenced) or not (do: Queue.Ack, which
// must land after its fenced send whoever owns the partition now).
func (c *Client) deleteMultiple(ctx context.Context, name string, table []byte, dels []*thrift2.TDelete, fenced bool) error {
	if len(dels) == 0 {
		return nil
	}
	return c.call(ctx, "deleteMultiple "+name, true, fenced, func(ctx context.Context, svc thrift2.THBaseService) error {
		left, err := svc.DeleteMultiple(ctx, table, dels)
		if err == nil && len(left) > 0 {
			return fmt.Errorf("%d of %d deletes not applied, first row %x", len(left), len(dels), left[0].Row)
		}
		return err
	})
}

func (c *Client) getMultiple(ctx context.Context, name string, table []byte, gets []*thrift2.TGet) ([]*thrift2.TResult_, error) {
	out := make([]*thrift2.TResult_, len(gets))
	err := c.chunks(ctx, len(gets), c.cfg.GetBatch, func(ctx context.Context, lo, hi int) error {
		return c.do(ctx, "getMultiple "+name, true, func(ctx context.Context, svc thrift2.THBaseService) error {
			res, err := svc.GetMultiple(ctx, table, gets[lo:hi])
			if err != nil {
				return err
			}
			if len(res) != hi-lo {
				return fmt.Errorf("%d results for %d rows", len(res), hi-lo)
			}
			copy(out[lo:], res)
			return nil
		})
	})
	return out, err
}

// lastIndex maps each fingerprint to the index of its last occurrence.
func lastIndex(fps []frontier.Fingerprint) map[string]int {
	m := make(map[string]int, len(fps))
	for i, fp := range fps {
		m[string(fp)] = i
	}
	return m
}
