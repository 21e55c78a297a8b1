//go:build integration

package hbase

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/frontiercrawl/frontier/hbase/internal/thrift2"
)

// BenchmarkIntegrationFencedPut: what fencing a scoring batch's queue writes in HBase would cost, on the real
// HBase, for a batch of 1,024 queue rows of 200 B (dbworker/fence.go says which fence the DB worker uses):
//
//   - put: one putMultiple per Config.PutBatch rows, as Queue.Schedule writes them; the fence is a check
//     before it (a Kafka request at most every 200 ms), so this is also the cost of the fenced write.
//   - epoch-row+put: a checkAndMutate on a per-partition epoch row (owner epoch unchanged) before the same
//     putMultiple. One more round trip per batch, and still not atomic: HBase checks one row at a time, so the
//     rows written are not the row checked.
//   - cas-per-row: every row written with checkAndMutate conditioned on an epoch cell of its own row, the only
//     write HBase makes atomic with a check: one round trip per row, Config.PoolSize at a time.
func BenchmarkIntegrationFencedPut(b *testing.B) {
	cfg := testConfig(b)
	c := openTest(b, cfg, queueTable)
	q := c.Queue()
	ctx := context.Background()
	const batch = 1024
	epochQ := []byte("e")
	epoch := i64(1)
	epochRow := []byte("\xff\xfe#epoch:0")
	if err := c.putMultiple(ctx, q.name, q.table, []*thrift2.TPut{{Row: epochRow, ColumnValues: []*thrift2.TColumnValue{{Family: famQueue, Qualifier: epochQ, Value: epoch}}}}); err != nil {
		b.Fatal(err)
	}
	next := 0
	rows := func(rng *rand.Rand) []*thrift2.TPut {
		puts := make([]*thrift2.TPut, batch)
		for i := range puts {
			it := benchItem(next, 10_000, rng)
			next++
			key := queueKey(it.Partition, scoreBucket(it.Score, c.cfg.ScoreBuckets), it.Host, it.Fingerprint)
			puts[i] = &thrift2.TPut{Row: key, ColumnValues: []*thrift2.TColumnValue{
				{Family: famQueue, Qualifier: qualQueue, Value: queueValue(it.Score, 0, it.Request)},
				{Family: famQueue, Qualifier: epochQ, Value: epoch}}}
		}
		return puts
	}
	putAll := func(puts []*thrift2.TPut) error {
		return c.chunks(ctx, len(puts), c.cfg.PutBatch, func(ctx context.Context, lo, hi int) error {
			return c.putMultiple(ctx, q.name, q.table, puts[lo:hi])
		})
	}
	cas := func(row []byte, put *thrift2.TPut, expect []byte) error {
		var ok bool
		err := c.do(ctx, "checkAndMutate "+q.name, true, func(ctx context.Context, svc thrift2.THBaseService) (err error) {
			ok, err = svc.CheckAndMutate(ctx, q.table, row, famQueue, epochQ, thrift2.TCompareOp_EQUAL, expect,
				&thrift2.TRowMutations{Row: row, Mutations: []*thrift2.TMutation{{Put: put}}})
			return err
		})
		if err == nil && !ok {
			err = fmt.Errorf("epoch check of row %x failed", row)
		}
		return err
	}
	for _, tc := range []struct {
		name  string
		write func([]*thrift2.TPut) (roundTrips int, err error)
	}{
		{"put", func(puts []*thrift2.TPut) (int, error) {
			return (len(puts) + c.cfg.PutBatch - 1) / c.cfg.PutBatch, putAll(puts)
		}},
		{"epoch-row+put", func(puts []*thrift2.TPut) (int, error) {
			touch := &thrift2.TPut{Row: epochRow, ColumnValues: []*thrift2.TColumnValue{{Family: famQueue, Qualifier: epochQ, Value: epoch}}}
			if err := cas(epochRow, touch, epoch); err != nil {
				return 0, err
			}
			return 1 + (len(puts)+c.cfg.PutBatch-1)/c.cfg.PutBatch, putAll(puts)
		}},
		{"cas-per-row", func(puts []*thrift2.TPut) (int, error) {
			g := errgroup.Group{}
			g.SetLimit(c.cfg.PoolSize)
			for _, p := range puts {
				g.Go(func() error { return cas(p.Row, p, nil) }) // a new row: its epoch cell is absent
			}
			return len(puts), g.Wait()
		}},
	} {
		b.Run(fmt.Sprintf("%s/batch=%d", tc.name, batch), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, batch))
			written, trips := 0, 0
			for b.Loop() {
				b.StopTimer()
				puts := rows(rng)
				b.StartTimer()
				n, err := tc.write(puts)
				if err != nil {
					b.Fatal(err)
				}
				written += len(puts)
				trips += n
			}
			b.ReportMetric(float64(written)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(trips)/float64(b.N), "round-trips/batch")
		})
	}
}
