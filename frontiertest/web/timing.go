package web

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"
)

// Timing gives the site the timing and the shape of the real web, for throughput benchmarks: hosts that answer
// at very different speeds, a large page on every host, pages that fail once, robots rules, broken links and
// hosts that a crawl only discovers late. A crawler that keeps every host busy is fast on it; one that hands
// out work in fixed rounds waits for its slowest hosts. Every field is off by default, so the default site's
// graph and timing do not change.
type Timing struct {
	// LatencyMin and LatencyMax spread the hosts' latency: each content host waits its own latency before it
	// answers any request (robots.txt included), drawn from the seed between the two, log-uniformly and skewed
	// towards LatencyMin (the latency is LatencyMin × (LatencyMax/LatencyMin)^(u³), u uniform in [0, 1)), so
	// most hosts are fast and a few are slow: with 1 ms and 500 ms the median host answers in about 2 ms, one
	// host in ten takes 90 ms or more. Equal values give every host that latency. Both 0: no latency.
	LatencyMin, LatencyMax time.Duration
	// LargePage adds /big.html to every content host, linked from its home page: Config.LargeBytes of HTML,
	// streamed (outcome Large).
	LargePage bool
	// FailOnce is the fraction of regular pages (home pages excepted) that answer 500 once and 200 afterwards;
	// a crawler that retries gets each of them. Pages that Hostile.Failing already fails keep their mode.
	FailOnce float64
	// SlowPages is the fraction of regular pages (home pages excepted) that wait LatencyMax more than their host
	// before they answer.
	SlowPages float64
	// Robots serves the standard robots.txt (see RobotsStandard) on every content host even with Config.Plain,
	// and links from each home page the pages that test its rules, some of them disallowed.
	Robots bool
	// Broken links each home page to /gone.html, which answers 404.
	Broken bool
	// Late is the fraction of content hosts (the last ones; never host1.test) that are discovered late: Seeds
	// leaves them out, and no page links them but the last page of another host's chain of regular pages
	// (/dK/pageN.html with N = PagesPerHost-1), so a crawler learns of them only deep into the crawl.
	Late float64
}

func (t Timing) validate() error {
	var errs []error
	if t.LatencyMin < 0 || t.LatencyMax < t.LatencyMin {
		errs = append(errs, fmt.Errorf("web: latency %v..%v, want 0 <= min <= max", t.LatencyMin, t.LatencyMax))
	}
	if t.LatencyMin == 0 && t.LatencyMax > 0 {
		errs = append(errs, fmt.Errorf("web: latency 0..%v: a log-uniform spread needs a minimum above 0", t.LatencyMax))
	}
	for name, f := range map[string]float64{"fail-once": t.FailOnce, "slow page": t.SlowPages, "late host": t.Late} {
		if f < 0 || f > 1 || math.IsNaN(f) {
			errs = append(errs, fmt.Errorf("web: %s fraction = %v, want 0..1", name, f))
		}
	}
	return errors.Join(errs...)
}

// hostLatency is content host i's latency under t (drawn from seed).
func (t Timing) hostLatency(seed uint64, i int) time.Duration {
	if t.LatencyMax <= 0 {
		return 0
	}
	if t.LatencyMax == t.LatencyMin {
		return t.LatencyMin
	}
	u := rand.New(rand.NewPCG(seed^0x1a7e, uint64(i))).Float64()
	f := math.Pow(float64(t.LatencyMax)/float64(t.LatencyMin), u*u*u)
	return time.Duration(float64(t.LatencyMin) * f)
}

// lateHosts is how many of n content hosts are late (host1.test never is).
func (t Timing) lateHosts(n int) int {
	return min(int(math.Round(t.Late*float64(n))), n-1)
}

// timing adds the Timing features to the graph: per-host latency, the large page, failing and slow pages, the
// robots pages, the broken link, and the late hosts' links.
func timing(g *graph, cfg Config, content []*Host, regular [][]*Page) {
	t := cfg.Timing
	for i, h := range content {
		h.latency = t.hostLatency(cfg.Seed, i)
		home := regular[i][0]
		rng := rand.New(rand.NewPCG(cfg.Seed^0x71e, uint64(i)))
		for _, p := range regular[i][1:] {
			fail, slow := rng.Float64() < t.FailOnce, rng.Float64() < t.SlowPages
			if fail && p.failN == 0 {
				p.failStatus, p.failN = http.StatusInternalServerError, 1
			}
			p.slow = slow
		}
		if t.LargePage {
			big := g.add(h, "/big.html", kindLarge, 200)
			home.link("/big.html", big.URL, "a large page")
		}
		if t.Robots && cfg.Plain {
			standardExtras(g, cfg, h, home)
		}
		if t.Broken {
			home.link("/gone.html", h.Origin+"/gone.html", "a page that is gone")
		}
	}
	late := t.lateHosts(len(content))
	if late <= 0 {
		return
	}
	first := len(content) - late
	isLate := map[*Host]bool{}
	for _, h := range content[first:] {
		h.late = true
		isLate[h] = true
	}
	deep := map[*Page]bool{}
	for i := range content {
		deep[regular[i][len(regular[i])-1]] = true
	}
	// No page but a deep one links a late host, directly or through a redirect.
	for _, p := range g.pages {
		if deep[p] || p.host.late {
			continue
		}
		p.body = dropLinks(p.body, func(target string) bool {
			q := g.pages[target]
			for hop := 0; q != nil && hop < 4; hop++ {
				if isLate[q.host] {
					return true
				}
				if q.kind != kindRedirect {
					break
				}
				q = g.pages[q.Location]
			}
			return false
		})
	}
	for j, h := range content[first:] {
		from := regular[j%first]
		last := from[len(from)-1]
		last.link(h.Origin+"/", h.Origin+"/", "found late: "+h.Name)
	}
}

// dropLinks removes the elements whose target drop accepts.
func dropLinks(es []elem, drop func(target string) bool) []elem {
	out := es[:0]
	for _, e := range es {
		if e.target != "" && drop(e.target) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// wait holds the answer to r for d; it drops the connection (no answer at all) if the client goes away or the
// site stops first.
func (h *Host) wait(r *http.Request, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		panic(http.ErrAbortHandler)
	case <-h.site.stopping:
		panic(http.ErrAbortHandler)
	}
}

// Latency returns the time the host waits before it answers each request (Timing.LatencyMin/Max).
func (h *Host) Latency() time.Duration { return h.latency }

// Late reports whether the host is discovered late (Timing.Late): not seeded, linked only from deep pages.
func (h *Host) Late() bool { return h.late }
