package identity

import (
	"testing"
	"time"

	"github.com/frontiercrawl/frontier/internal/cputime"
)

func reportRates(b *testing.B, n int, cpu0 time.Duration) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "URLs/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "URLs/cpu-s")
	}
}

// benchURLs are the inputs of testdata/canon/vectors.json that w3lib 2.5 canonicalises (the realistic mix
// bench/identity_bench.py times on the Python side).
func benchURLs(b *testing.B) []string {
	f := loadCanonVectors(b)
	var urls []string
	for _, v := range f.Vectors {
		if _, ok := v["w3lib25_out"]; ok && v["b64"] == "" {
			urls = append(urls, v["in"])
		}
	}
	return urls
}

// BenchmarkCanonicalizeSHA1 is the hot path of the URL-seen test: canonicalise (w3lib 2.5 rules) and
// take Frontera's sha1 fingerprint, into reused buffers.
func BenchmarkCanonicalizeSHA1(b *testing.B) {
	urls := benchURLs(b)
	f, err := ParseFingerprinter("sha1", CanonOptions{}, ScrapyOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 20)
	scratch := make([]byte, 0, 1024)
	n := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		fp, err := f.AppendURL(dst[:0], urls[n%len(urls)], scratch)
		if err != nil || len(fp) != 20 {
			b.Fatal(err)
		}
		n++
	}
	reportRates(b, n, cpu0)
}

func BenchmarkCanonicalizeSHA1W3lib122(b *testing.B) {
	urls := benchURLs(b)
	f, _ := ParseFingerprinter("sha1", CanonOptions{Mode: CanonW3lib122}, ScrapyOptions{})
	dst := make([]byte, 0, 20)
	scratch := make([]byte, 0, 1024)
	n := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		_, _ = f.AppendURL(dst[:0], urls[n%len(urls)], scratch)
		n++
	}
	reportRates(b, n, cpu0)
}

func BenchmarkCanonicalize(b *testing.B) {
	urls := benchURLs(b)
	scratch := make([]byte, 0, 1024)
	var bytesIn int
	n := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		u := urls[n%len(urls)]
		bytesIn += len(u)
		var err error
		if scratch, err = (CanonOptions{}).AppendCanonical(scratch[:0], u); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportRates(b, n, cpu0)
	b.ReportMetric(float64(bytesIn)/float64(n), "B/URL")
}

// BenchmarkCanonicalizeSHA1Simple is the common case: plain ASCII http(s) URLs with a short query.
func BenchmarkCanonicalizeSHA1Simple(b *testing.B) {
	urls := []string{
		"http://www.example.com/", "https://news.example.org/2024/05/article-title.html",
		"http://shop.example.com/catalog/item?id=1234&color=red&size=m", "https://example.com/search?q=go+lang&page=2",
		"http://blog.example.net/tag/crawling/", "https://www.example.com/a/b/c/d.php?x=1#top",
	}
	benchFingerprintSHA1(b, urls)
}

// benchFingerprintSHA1 canonicalises and fingerprints (sha1) urls in turn into reused buffers, and reports the
// rates.
func benchFingerprintSHA1(b *testing.B, urls []string) {
	b.Helper()
	f, _ := ParseFingerprinter("sha1", CanonOptions{}, ScrapyOptions{})
	dst := make([]byte, 0, 20)
	scratch := make([]byte, 0, 1024)
	n := 0
	cpu0 := cputime.Process()
	for b.Loop() {
		_, _ = f.AppendURL(dst[:0], urls[n%len(urls)], scratch)
		n++
	}
	reportRates(b, n, cpu0)
}
