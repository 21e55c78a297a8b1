package spider

import (
	"testing"

	"github.com/frontiercrawl/frontier/internal/cputime"
)

// BenchmarkBodyDigest is the content digest (meta frontier_digest) of a large page's 8 MiB, what the spider
// computes for every 2xx page it fetches.
//
//	go test -run XXX -bench BenchmarkBodyDigest ./spider/
func BenchmarkBodyDigest(b *testing.B) {
	body := largeHTML(8 << 20)
	b.SetBytes(int64(len(body)))
	n := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		if d := bodyDigest(body); d == "" {
			b.Fatal("empty digest")
		}
		n++
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n*len(body))/1e6/cpu.Seconds(), "MB/CPU-s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "CPU-µs/page")
	}
}

// TestBodyDigest pins the content digest's form: the hex of the body's XXH64 (seed 0), big-endian, 16 digits.
func TestBodyDigest(t *testing.T) {
	for body, want := range map[string]string{"": "ef46db3751d8e999", "abc": "44bc2cf5ad770999"} {
		if got := bodyDigest([]byte(body)); got != want {
			t.Errorf("bodyDigest(%q) = %s, want %s", body, got, want)
		}
	}
}
