package hbase

import (
	"context"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
)

// Each calls fn with every domain that has counter name, in row order, by scanning the domain table (one row
// per host or domain the crawl counted, not per URL). It reads at most limit rows (0: no limit). Meant for
// operators' reports (frontierctl status: top hosts by errors), not for hot paths.
func (d *Domains) Each(ctx context.Context, name string, limit int, fn func(domain string, v int64)) error {
	const page = 5000
	var start []byte
	read := 0
	for {
		n := page
		if limit > 0 {
			n = min(n, limit-read)
			if n <= 0 {
				return nil
			}
		}
		scan := &thrift2.TScan{StartRow: start, Columns: []*thrift2.TColumn{{Family: famMeta, Qualifier: []byte(name)}},
			Caching: thrift.Int32Ptr(int32(n)), MaxVersions: 1, Limit: thrift.Int32Ptr(int32(n))}
		var rows []*thrift2.TResult_
		err := d.c.do(ctx, "getScannerResults "+d.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
			rows, err = svc.GetScannerResults(ctx, d.table, scan, int32(n))
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if v := cellValue(r, famMeta, []byte(name)); v != nil {
				if c, err := counterValue(v); err == nil {
					fn(string(r.Row), c)
				}
			}
		}
		read += len(rows)
		if len(rows) < n {
			return nil
		}
		start = append(append([]byte(nil), rows[len(rows)-1].Row...), 0) // the next row after the last one
	}
}
