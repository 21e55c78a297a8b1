package hbase

import (
	"context"
	"fmt"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/state"
)

// Each calls fn with every state in the table, in row (fingerprint) order, until fn returns an error
// (returned as is). It scans the whole table in pages, so it is meant for end-of-crawl checks and tools
// (frontiertest's accounting check), not for a hot path.
func (s *States) Each(ctx context.Context, fn func(fp frontier.Fingerprint, e state.Entry) error) error {
	const page = 5000
	var start []byte
	for {
		scan := &thrift2.TScan{StartRow: start, Columns: []*thrift2.TColumn{{Family: famState, Qualifier: qualState}},
			Caching: thrift.Int32Ptr(page), MaxVersions: 1, Limit: thrift.Int32Ptr(page)}
		var rows []*thrift2.TResult_
		err := s.c.do(ctx, "getScannerResults "+s.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
			rows, err = svc.GetScannerResults(ctx, s.table, scan, page)
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range rows {
			v := cellValue(r, famState, qualState)
			if v == nil {
				continue
			}
			e, err := decodeStateValue(v)
			if err != nil {
				return fmt.Errorf("hbase: %s row %x: %w", s.name, r.Row, err)
			}
			if err := fn(frontier.Fingerprint(r.Row), e); err != nil {
				return err
			}
		}
		if len(rows) < page {
			return nil
		}
		start = append(append([]byte(nil), rows[len(rows)-1].Row...), 0) // the next row after the last one
	}
}

// Has reports, for each fingerprint, whether the queue holds a row for it (due or not): its index row names
// a queue row key, and that row exists (Ack deletes the row and leaves the index).
func (q *Queue) Has(ctx context.Context, fps []frontier.Fingerprint) ([]bool, error) {
	out := make([]bool, len(fps))
	if len(fps) == 0 {
		return out, nil
	}
	idx, err := q.readIndex(ctx, fps)
	if err != nil {
		return nil, err
	}
	var gets []*thrift2.TGet
	var at []int
	for i, e := range idx {
		if e.cur != nil {
			gets = append(gets, &thrift2.TGet{Row: e.cur, Columns: []*thrift2.TColumn{{Family: famQueue, Qualifier: qualQueue}}})
			at = append(at, i)
		}
	}
	if len(gets) == 0 {
		return out, nil
	}
	res, err := q.c.getMultiple(ctx, q.name, q.table, gets)
	if err != nil {
		return nil, err
	}
	for j, r := range res {
		out[at[j]] = cellValue(r, famQueue, qualQueue) != nil
	}
	return out, nil
}
