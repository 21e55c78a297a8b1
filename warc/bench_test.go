package warc

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier/internal/cputime"
)

// benchBody returns HTML of about n bytes made of random words: it compresses about as well as real pages
// (3–5×), unlike repeated text.
func benchBody(n int) []byte {
	words := strings.Fields("the crawl frontier holds urls fetch page host robots delay queue score batch spider " +
		"strategy worker kafka hbase partition offset link anchor title body html head meta canonical archive record")
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>bench</title></head><body>\n")
	for b.Len() < n {
		if rng.IntN(12) == 0 {
			fmt.Fprintf(&b, "<a href=\"/d%d/page%d.html\">", rng.IntN(4), rng.IntN(100000))
		}
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return []byte(b.String()[:n])
}

func benchExchange(size int) *Exchange {
	ex := exchange(1)
	ex.Body = benchBody(size)
	ex.ResponseHead = fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nServer: bench\r\n\r\n", size)
	return ex
}

func exchangeBytes(ex *Exchange) int {
	n := len(ex.Request) + len(ex.ResponseHead) + len(ex.Body)
	for _, f := range ex.Metadata {
		n += len(f.Name) + len(f.Value) + 4
	}
	return n
}

// BenchmarkWriteExchange writes request+response+metadata records to real files (rotating at 1 GB, no fsync
// until Close). MB/s counts the HTTP bytes archived; records/s counts the three records of each exchange.
func BenchmarkWriteExchange(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		for _, level := range []int{1, 6} {
			b.Run(fmt.Sprintf("body=%dKiB/level=%d", size>>10, level), func(b *testing.B) {
				cfg := testConfig(b)
				cfg.CompressionLevel = level
				w := newWriter(b, cfg)
				ex := benchExchange(size)
				b.SetBytes(int64(exchangeBytes(ex)))
				b.ReportAllocs()
				n := 0
				cpu0 := cputime.Process()
				for b.Loop() {
					if _, err := w.WriteExchange(ex); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.StopTimer()
				cpu := cputime.Process() - cpu0
				st := w.Stats()
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(3*n)/sec, "records/s")
				b.ReportMetric(float64(st.Bytes-st.Bytes/int64(n+1))/float64(n), "B/exchange")
				b.ReportMetric(float64(st.UncompressedBytes)/float64(st.Bytes), "ratio")
				b.ReportMetric(float64(n*exchangeBytes(ex))/1e6/cpu.Seconds(), "MB/cpu-s")
			})
		}
	}
}

// BenchmarkWriteExchangeParallel is BenchmarkWriteExchange with GOMAXPROCS writers sharing one Writer.
func BenchmarkWriteExchangeParallel(b *testing.B) {
	cfg := testConfig(b)
	w := newWriter(b, cfg)
	ex := benchExchange(16 << 10)
	b.SetBytes(int64(exchangeBytes(ex)))
	b.ReportAllocs()
	cpu0 := cputime.Process()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := w.WriteExchange(ex); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	cpu := cputime.Process() - cpu0
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(3*b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.N*exchangeBytes(ex))/1e6/cpu.Seconds(), "MB/cpu-s")
}
