package hbase

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
	"github.com/frontiercrawl/frontier/metadata"
)

// Metadata qualifiers in family m of the metadata table. Integers are 8-byte big-endian.
var (
	qualURL         = []byte("u")
	qualFirstSeen   = []byte("f")
	qualLastFetched = []byte("l")
	qualStatus      = []byte("s")
	qualDepth       = []byte("d")
	qualContentType = []byte("c")
	qualError       = []byte("e")
	qualRedirect    = []byte("r")
)

// Pages is the metadata.Store on the metadata table. Safe for concurrent use; it borrows the Client.
type Pages struct {
	c     *Client
	table []byte
	name  string
}

var _ metadata.Store = (*Pages)(nil)

// Pages returns the page metadata store.
func (c *Client) Pages() *Pages {
	n := c.cfg.table(metadataTable)
	return &Pages{c: c, table: []byte(n), name: n}
}

func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// Put writes only the known (non-zero) fields of each page, so HBase's own cell merge implements "zero does not
// overwrite". FirstSeen is written only where the row has none yet (one multi-get for the batch).
func (p *Pages) Put(ctx context.Context, pages []metadata.Page) error {
	var fsGets []*thrift2.TGet
	var fsAt []int
	for i := range pages {
		if len(pages[i].Fingerprint) == 0 {
			return fmt.Errorf("hbase: metadata put: page %d (%q) has no fingerprint", i, pages[i].URL)
		}
		if pages[i].FirstSeen != 0 {
			fsGets = append(fsGets, &thrift2.TGet{Row: pages[i].Fingerprint, Columns: []*thrift2.TColumn{{Family: famMeta, Qualifier: qualFirstSeen}}})
			fsAt = append(fsAt, i)
		}
	}
	hasFS := make(map[string]bool, len(fsGets))
	if len(fsGets) > 0 {
		res, err := p.c.getMultiple(ctx, p.name, p.table, fsGets)
		if err != nil {
			return err
		}
		for n, r := range res {
			if cellValue(r, famMeta, qualFirstSeen) != nil {
				hasFS[string(pages[fsAt[n]].Fingerprint)] = true
			}
		}
	}
	puts := make([]*thrift2.TPut, 0, len(pages))
	for i := range pages {
		pg := &pages[i]
		var cv []*thrift2.TColumnValue
		add := func(q, v []byte) { cv = append(cv, &thrift2.TColumnValue{Family: famMeta, Qualifier: q, Value: v}) }
		if pg.URL != "" {
			add(qualURL, []byte(pg.URL))
		}
		if pg.FirstSeen != 0 && !hasFS[string(pg.Fingerprint)] {
			add(qualFirstSeen, i64(pg.FirstSeen))
			hasFS[string(pg.Fingerprint)] = true // the first page of the batch wins
		}
		if pg.LastFetched != 0 {
			add(qualLastFetched, i64(pg.LastFetched))
		}
		if pg.Status != 0 {
			add(qualStatus, i64(int64(pg.Status)))
		}
		if pg.Depth != 0 {
			add(qualDepth, i64(int64(pg.Depth)))
		}
		if pg.ContentType != "" {
			add(qualContentType, []byte(pg.ContentType))
		}
		if pg.Error != "" {
			add(qualError, []byte(pg.Error))
		}
		if len(pg.RedirectTo) != 0 {
			add(qualRedirect, pg.RedirectTo)
		}
		if len(cv) > 0 {
			puts = append(puts, &thrift2.TPut{Row: pg.Fingerprint, ColumnValues: cv})
		}
	}
	return p.c.chunks(ctx, len(puts), p.c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
		return p.c.putMultiple(ctx, p.name, p.table, puts[lo:hi])
	})
}

// Get reads the record of fp.
func (p *Pages) Get(ctx context.Context, fp frontier.Fingerprint) (metadata.Page, bool, error) {
	if len(fp) == 0 {
		return metadata.Page{}, false, errors.New("hbase: metadata get: empty fingerprint")
	}
	var r *thrift2.TResult_
	err := p.c.do(ctx, "get "+p.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
		r, err = svc.Get(ctx, p.table, &thrift2.TGet{Row: fp, Columns: []*thrift2.TColumn{{Family: famMeta}}})
		return err
	})
	if err != nil || r == nil || len(r.ColumnValues) == 0 {
		return metadata.Page{}, false, err
	}
	pg := metadata.Page{Fingerprint: fp}
	for _, cv := range r.ColumnValues {
		var n int64
		switch string(cv.Qualifier) {
		case string(qualFirstSeen), string(qualLastFetched), string(qualStatus), string(qualDepth):
			if len(cv.Value) != 8 {
				return metadata.Page{}, false, fmt.Errorf("hbase: %s row %x column m:%s: %d bytes, want 8", p.name, fp, cv.Qualifier, len(cv.Value))
			}
			n = int64(binary.BigEndian.Uint64(cv.Value))
		}
		switch string(cv.Qualifier) {
		case string(qualURL):
			pg.URL = string(cv.Value)
		case string(qualFirstSeen):
			pg.FirstSeen = n
		case string(qualLastFetched):
			pg.LastFetched = n
		case string(qualStatus):
			pg.Status = int(n)
		case string(qualDepth):
			pg.Depth = int(n)
		case string(qualContentType):
			pg.ContentType = string(cv.Value)
		case string(qualError):
			pg.Error = string(cv.Value)
		case string(qualRedirect):
			pg.RedirectTo = frontier.Fingerprint(cv.Value)
		}
	}
	return pg, true, nil
}

// Domains is the metadata.Domains on the domain_metadata table: row = domain (UTF-8), column m:<counter name>,
// value = HBase's 8-byte big-endian counter. Safe for concurrent use; it borrows the Client.
//
// Add uses HBase increments, which are atomic but not idempotent: an increment whose connection breaks after
// sending is not retried (it may have been applied), and the error says so.
type Domains struct {
	c     *Client
	table []byte
	name  string
}

var _ metadata.Domains = (*Domains)(nil)

// Domains returns the per-domain counters.
func (c *Client) Domains() *Domains {
	n := c.cfg.table(domainsTable)
	return &Domains{c: c, table: []byte(n), name: n}
}

func checkDomains(op, name string, domains []string) error {
	if name == "" {
		return fmt.Errorf("hbase: domains %s: empty counter name", op)
	}
	for i, d := range domains {
		if d == "" {
			return fmt.Errorf("hbase: domains %s: domain %d is empty", op, i)
		}
	}
	return nil
}

// Add increments each distinct domain once (repeated domains are summed) and returns, for each position, the
// value after that position's delta, as if the deltas were applied in order.
func (d *Domains) Add(ctx context.Context, name string, domains []string, delta []int64) ([]int64, error) {
	if len(delta) != len(domains) {
		return nil, fmt.Errorf("hbase: domains add: %d deltas for %d domains", len(delta), len(domains))
	}
	if err := checkDomains("add", name, domains); err != nil {
		return nil, err
	}
	sum := map[string]int64{}
	var order []string
	for i, dom := range domains {
		if _, ok := sum[dom]; !ok {
			order = append(order, dom)
		}
		sum[dom] += delta[i]
	}
	final := make(map[string]int64, len(order))
	results := make([]int64, len(order))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(d.c.cfg.PoolSize)
	for n, dom := range order {
		g.Go(func() error {
			inc := &thrift2.TIncrement{Row: []byte(dom), Columns: []*thrift2.TColumnIncrement{{Family: famMeta, Qualifier: []byte(name), Amount: sum[dom]}}, ReturnResults: thrift.BoolPtr(true)}
			var r *thrift2.TResult_
			err := d.c.do(gctx, "increment "+d.name, false, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
				r, err = svc.Increment(ctx, d.table, inc)
				return err
			})
			if err != nil {
				return err
			}
			v, err := counterValue(cellValue(r, famMeta, []byte(name)))
			if err != nil {
				return fmt.Errorf("hbase: %s row %q: %w", d.name, dom, err)
			}
			results[n] = v
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for n, dom := range order {
		final[dom] = results[n]
	}
	// Walk backwards: the last occurrence sees the final value; earlier ones see it minus the later deltas.
	out := make([]int64, len(domains))
	for i := len(domains) - 1; i >= 0; i-- {
		out[i] = final[domains[i]]
		final[domains[i]] -= delta[i]
	}
	return out, nil
}

// Get reads the counters with one multi-get per Config.GetBatch domains.
func (d *Domains) Get(ctx context.Context, name string, domains []string) ([]int64, error) {
	if err := checkDomains("get", name, domains); err != nil {
		return nil, err
	}
	gets := make([]*thrift2.TGet, len(domains))
	for i, dom := range domains {
		gets[i] = &thrift2.TGet{Row: []byte(dom), Columns: []*thrift2.TColumn{{Family: famMeta, Qualifier: []byte(name)}}}
	}
	res, err := d.c.getMultiple(ctx, d.name, d.table, gets)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(domains))
	for i, r := range res {
		v := cellValue(r, famMeta, []byte(name))
		if v == nil {
			continue
		}
		if out[i], err = counterValue(v); err != nil {
			return nil, fmt.Errorf("hbase: %s row %q: %w", d.name, domains[i], err)
		}
	}
	return out, nil
}

func counterValue(v []byte) (int64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("counter value of %d bytes, want 8", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}
