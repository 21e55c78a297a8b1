package pebblebus

import (
	"encoding/binary"
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	dto "github.com/prometheus/client_model/go"

	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/bus/bustest"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

var benchSync = flag.Bool("bench.sync", false, "benchmarks: fsync every Send and Commit")

// BenchmarkSendFetchCommit moves feed-sized messages (20-byte key, 200-byte value) through one partition in
// batches of 512, Send, Fetch, Commit, on a real directory (bustest.SendFetchCommit, as membus's benchmark).
func BenchmarkSendFetchCommit(b *testing.B) {
	benchSendFetchCommit(b, openDB(b, vfs.Default, b.TempDir()))
}

// BenchmarkSendFetchCommitMemFS is BenchmarkSendFetchCommit on Pebble's in-memory filesystem: what the unit
// tests' bus (membus) would cost if pebblebus on vfs.NewMem replaced it.
func BenchmarkSendFetchCommitMemFS(b *testing.B) {
	benchSendFetchCommit(b, openDB(b, vfs.NewMem(), ""))
}

func benchSendFetchCommit(b *testing.B, db *pebble.DB) {
	defer db.Close()
	cfg := DefaultConfig()
	cfg.Sync = *benchSync
	bb, err := Open(db, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	bustest.SendFetchCommit(b, bb)
}

// BenchmarkRound is one round of standalone mode's loop on one database, every stream one partition: a
// spider reports (Send to the spider log), the strategy worker reads it, scores (Send to the scoring log),
// writes its states and commits, the DB worker's links role reads it, writes its pages and commits, its batch
// role reads the scores, writes the queue and commits, then sends a batch to the feed and acknowledges the
// queue rows, and the spider reads the feed and commits: ten writes. "every" fsyncs each of them (the
// default); "spider" defers all but the spider's two, as package standalone does (DeferSends, DeferCommits and the
// stores' pebblestore.Config.DeferSync). It reports the CPU time and the fsyncs per round.
//
//	go test -run XXX -bench BenchmarkRound -benchtime 2000x ./bus/pebblebus/
func BenchmarkRound(b *testing.B) {
	for _, mode := range []string{"every", "spider"} {
		b.Run(mode, func(b *testing.B) {
			db := openDB(b, vfs.Default, b.TempDir())
			defer db.Close()
			cfg := DefaultConfig()
			storeWO := pebble.Sync
			if mode == "spider" {
				cfg.DeferSends = []bus.Stream{bus.ScoringLog, bus.SpiderFeed}
				cfg.DeferCommits = []bus.Stream{bus.SpiderLog, bus.ScoringLog}
				storeWO = pebble.NoSync
			}
			bb, err := Open(db, cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer bb.Close()
			ctx := b.Context()
			zero := func([]byte, int) int { return 0 }
			logP, _ := bb.Producer(ctx, bus.SpiderLog, zero)
			scoreP, _ := bb.Producer(ctx, bus.ScoringLog, zero)
			feedP, _ := bb.Producer(ctx, bus.SpiderFeed, zero)
			swC, _ := bb.Consumer(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog, []int{0})
			linksC, _ := bb.Consumer(ctx, bus.SpiderLog, bus.GroupDBWorkerSpiderLog, []int{0})
			scoreC, _ := bb.Consumer(ctx, bus.ScoringLog, bus.GroupDBWorkerScoringLog, []int{0})
			feedC, _ := bb.Consumer(ctx, bus.SpiderFeed, bus.GroupSpiderFeed, []int{0})
			msgs := make([]bus.Message, 8)
			val := make([]byte, 400)
			for i := range msgs {
				msgs[i] = bus.Message{Key: []byte("host-000000.example."), Value: val}
			}
			var key [16]byte
			store := func(i int) {
				binary.BigEndian.PutUint64(key[8:], uint64(i))
				if err := db.Set(key[:], val[:64], storeWO); err != nil {
					b.Fatal(err)
				}
			}
			consume := func(c bus.Consumer) {
				got, err := c.Fetch(ctx, len(msgs))
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Commit(ctx, got); err != nil {
					b.Fatal(err)
				}
			}
			send := func(p bus.Producer) {
				if err := p.Send(ctx, msgs...); err != nil {
					b.Fatal(err)
				}
			}
			syncs0 := walSyncs(db)
			start, cpu0 := time.Now(), cputime.Process()
			i := 0
			for b.Loop() {
				send(logP)   // the spider's report
				send(scoreP) // strategy worker: scores, states, commit
				store(i)
				consume(swC)
				store(i + 1) // links role: pages, commit
				consume(linksC)
				store(i + 2) // batch role: queue, commit
				consume(scoreC)
				send(feedP) // the batch on the feed, the rows acknowledged
				store(i + 3)
				consume(feedC) // the spider's feed commit
				i += 4
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rounds/s")
			b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N), "cpu-µs/round")
			b.ReportMetric(float64(walSyncs(db)-syncs0)/float64(b.N), "fsyncs/round")
		})
	}
}

// walSyncs is how many times Pebble has synced its WAL (its fsync latency histogram's count).
func walSyncs(db *pebble.DB) int64 {
	h := db.Metrics().LogWriter.FsyncLatency
	if h == nil {
		return 0
	}
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		return 0
	}
	return int64(m.GetHistogram().GetSampleCount())
}

// BenchmarkSendLarge is the gateway's and the strategy worker's Send in standalone mode: 16,384 messages of
// 250 bytes in one Send over 8 partitions of the spider log (then fetched and committed by one group, so that
// the log stays empty), on a real directory. It reports messages per CPU-second and the bytes
// the Go heap allocated per message (Send's batch, Fetch's copies).
//
//	go test -run XXX -bench BenchmarkSendLarge -benchtime 200x ./bus/pebblebus/
func BenchmarkSendLarge(b *testing.B) {
	const nmsgs, parts = 16384, 8
	db := openDB(b, vfs.Default, b.TempDir())
	defer db.Close()
	cfg := DefaultConfig()
	cfg.Sync = *benchSync
	cfg.Partitions[bus.SpiderLog] = parts
	bb, err := Open(db, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	ctx := b.Context()
	p, err := bb.Producer(ctx, bus.SpiderLog, func(k []byte, n int) int { return int(k[len(k)-1]) % n })
	if err != nil {
		b.Fatal(err)
	}
	all := make([]int, parts)
	for i := range all {
		all[i] = i
	}
	c, err := bb.Consumer(ctx, bus.SpiderLog, bus.GroupStrategyWorkerSpiderLog, all)
	if err != nil {
		b.Fatal(err)
	}
	msgs := make([]bus.Message, nmsgs)
	for i := range msgs {
		msgs[i] = bus.Message{Key: fmt.Appendf(nil, "host-%06d.example.", i), Value: make([]byte, 230)}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	alloc0, cpu0 := ms.TotalAlloc, cputime.Process()
	for b.Loop() {
		if err := p.Send(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < nmsgs; {
			m, err := c.Fetch(ctx, nmsgs-got)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Commit(ctx, m); err != nil {
				b.Fatal(err)
			}
			got += len(m)
		}
	}
	runtime.ReadMemStats(&ms)
	n := float64(b.N * nmsgs)
	b.ReportMetric(n/(cputime.Process()-cpu0).Seconds(), "msgs/cpu-s")
	b.ReportMetric(float64(ms.TotalAlloc-alloc0)/n, "alloc-B/msg")
}
