package standalone

import (
	"slices"
	"time"

	"github.com/frontiercrawl/frontier/frontiertest/web"
)

// redirectLatency measures, at the site's servers, how long after a redirect's answer its target was asked
// for (only targets first asked for after the redirect: a target fetched earlier costs nothing): median and
// 90th percentile, and how many such hops there were.
func redirectLatency(site *web.Site) (p50, p90 time.Duration, n int) {
	byHost := map[string]*web.Host{}
	for _, h := range append(site.Hosts(), site.Special()...) {
		byHost[h.Name] = h
	}
	first := map[string]web.Request{} // normalised URL → its first request
	for _, r := range site.Requests() {
		h := byHost[r.Host]
		if h == nil {
			continue
		}
		u, err := web.Normalize(h.Origin+"/", r.Target)
		if err != nil {
			continue
		}
		if _, ok := first[u]; !ok {
			first[u] = r
		}
	}
	var lat []time.Duration
	for _, p := range site.Pages() {
		if p.Status < 300 || p.Status >= 400 || p.Location == "" {
			continue
		}
		src, ok := first[p.URL]
		tgt, ok2 := first[p.Location]
		if !ok || !ok2 || !tgt.Start.After(src.End) {
			continue
		}
		lat = append(lat, tgt.Start.Sub(src.End))
	}
	if len(lat) == 0 {
		return 0, 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*9/10], len(lat)
}
