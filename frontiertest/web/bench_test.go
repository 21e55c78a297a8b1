package web

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/frontiercrawl/frontier/internal/cputime"
)

// BenchmarkServe measures how fast the site answers small pages over many hosts, client included (both share
// the machine): the ceiling a spider benchmark against this site can reach. One connection per host, as a
// polite spider would use.
func BenchmarkServe(b *testing.B) {
	for _, hosts := range []int{20, 200} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Hosts, cfg.PagesPerHost, cfg.Plain, cfg.DisableRequestLog = hosts, 20, true, true
			s := Start(b, cfg)
			tr := s.Transport()
			tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1, 1, hosts
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			pages := s.Pages()
			var next, bytes atomic.Int64
			b.SetParallelism(hosts / 2) // GOMAXPROCS×hosts/2 goroutines: every host busy
			b.ResetTimer()
			cpu0 := cputime.Process()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p := pages[int(next.Add(1))%len(pages)]
					resp, err := c.Get(p.URL)
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					bytes.Add(n)
				}
			})
			b.StopTimer()
			cpu := cputime.Process() - cpu0
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			b.ReportMetric(float64(b.N)/cpu.Seconds(), "pages/cpu-s")
			b.ReportMetric(float64(bytes.Load())/float64(b.N), "B/page")
		})
	}
}
