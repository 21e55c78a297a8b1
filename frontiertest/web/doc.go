// Package web serves a synthetic multi-host website on loopback addresses, with a known link graph: the ground
// truth that spider and end-to-end tests compare a crawl with, and a server that measures how it was crawled.
// It is a test helper: import it from _test.go files and benchmarks. The one exception is the standalone's
// --demo (package launch, which cmd/standalone runs), which serves this synthetic web so that the quick start
// crawls something real without a network; internal/archtest lists the exception. It imports no Frontier
// package.
//
// # Quick start
//
//	site := web.Start(t, web.DefaultConfig())   // 20 hosts × 50 pages; stopped by t.Cleanup
//	tr := site.Transport()                      // or set your own Transport's DialContext = site.DialContext
//	seeds := site.Seeds()                       // http://host1.test/ … http://host20.test/
//	... crawl ...
//	want, _ := site.Reachable(seeds...)         // URL → Outcome a correct polite crawler sees
//	for _, h := range site.Hosts() {
//		if h.MaxConns() > 1 { t.Errorf("%s: %d connections at once", h.Name, h.MaxConns()) }
//		gap, _ := h.MinGap(func(r web.Request) bool { return r.Target != "/robots.txt" })
//		...
//	}
//
// # Hosts and addresses
//
// Content host i (host1.test … hostN.test) listens on FirstIP+i-1: host1.test on 127.0.0.2, host3.test on
// 127.0.0.4 (Linux routes all of 127.0.0.0/8 to the loopback interface; checked on the build machines). Each
// listens on a port chosen by the kernel. Page URLs name hosts without a port (http://host3.test/d1/page5.html),
// so a crawler must dial through Site.DialContext, which maps host3.test:80 to host3's listener, answers a
// *net.DNSError for names it does not know (the site never dials out), and dials IP addresses as given.
// Site.Transport returns an http.Transport wired that way. With Config.UseIPs the pages name hosts by IP and
// port instead (http://127.0.0.4:40123/), and any stock client reaches them. Where 127.0.0.2 cannot be bound,
// every host listens on 127.0.0.1 on its own port (Site.SharedIP reports it).
//
// After the content hosts come the special hosts (absent with Config.Plain): slow.test answers every request
// after Config.SlowDelay; blackhole.test accepts connections and never answers; refused.test resolves to an
// address where nothing listens; nxdomain.test does not resolve; www.host1.test and blog.host1.test are
// subdomains of host1.test (the same registrable domain, for per-domain budgets; robots.txt 404, four pages
// each); xn--bcher-kva.test is bücher.test, linked by its Unicode name (IDNHost). host1.test's /features.html
// links to each.
//
// # robots.txt
//
// host2.test asks for Crawl-delay: Config.CrawlDelay (no Crawl-delay line when it is 0); host3.test answers 503 (RFC 9309: disallow everything);
// host4.test answers 404 (allow everything); every other content host serves the standard rules (see
// RobotsStandard): /private/ is disallowed but /private/open.html is allowed (longest match wins),
// "/*sessionid=" and "/*.bak$" exercise the wildcards, and the agent FrontierTestBadBot (BadBot) is disallowed
// everywhere. Each home page links pages that test each rule. With Config.Plain every robots.txt answers 404.
//
// # Pages
//
// Regular pages are "/" and /dK/pageN.html; page N links page N+1, so a home page reaches all of its host's
// pages, and Config.LinksPerPage-1 random pages, a fraction Config.CrossHostLinks of them on other hosts. Links
// are written in every form real pages use: absolute, root-relative, "./" and "../" relative, with fragments,
// upper-case host, explicit :80. Every content host also has /private/…, /~user/index.html (linked as
// /%7Euser/…) and /list?a=1&b=2 (linked with the arguments reordered). host1.test's /features.html links: a
// 301→302→307→308 redirect chain (/r/chain/1), a relative Location, a cross-host redirect (/r/cross, to the
// last host), a redirect loop (/r/loop/a), errors 404/410/429/500/503 (/err/N; 429 and 503 with Retry-After: 1), a PDF (/files/doc.pdf, whose text
// names PDFTrapPath: a crawler must not follow it), the large pages /large.html and /large-chunked.html (Config.LargeBytes, streamed; the second without
// Content-Length),
// HTML and PDF served without Content-Type (/sniff/…), gzip and brotli pages (/enc/…, encoded when the
// request's Accept-Encoding allows; their links are found only by a crawler that decodes), rel=nofollow links
// and a page with <meta name="robots" content="noindex, nofollow">,
// link rel=canonical/alternate plus a stylesheet, script, image and mailto:/javascript:/ftp: links that must
// not be followed (/meta.html), a frameset, an iframe, an image map, a page of URL variants that all lead to one
// page (/variants.html: upper-case host and scheme, explicit default port, dot segments, escaped letters,
// fragments, surrounding whitespace, a newline inside the path, backslashes) and a <base href> page. Unknown paths answer 404.
//
// Page.Links lists what a crawler must follow from a page: normalised (see Normalize: browser resolution,
// then w3lib-style canonicalisation), de-duplicated, in document order. Site.Reachable(seeds) walks the graph
// as a polite crawler would (robots.txt obeyed as agent "*", nofollow honoured, redirects followed; see
// ReachableWith for other crawlers) and returns every URL it learns about with the Outcome it sees. Everything
// is a pure function of the Config: the same Seed gives the same pages, byte for byte.
//
// # Traps, deep pages and sitemaps
//
// Config.Hostile (hostile.go) adds what a crawler meets on a real web: redirects, transient failures, infinite
// URL spaces (Traps: a calendar by month, session ids, a relative-link loop, ever deeper paths; Chains: an
// endless /cal/N chain on every host and a ?date= chain on host1, which no URL rule sees), a real site deep
// chain of distinct paths (DeepPages, on the last host) and pages only sitemaps lead to (SitemapPages, on
// host1, whose robots.txt names a sitemap index of an XML, a gzipped and a text sitemap). Trap pages are not in
// the graph; TrapFetches counts the requests for them (chains.go, sitemaps.go).
//
// # Timing
//
// Config.Timing gives the site the real web's timing for throughput benchmarks (see Timing): every content host
// waits its own latency before each answer, spread from LatencyMin to LatencyMax with most hosts fast and a few
// slow; every host can have a large page (/big.html), pages that answer 500 once and then 200, slow pages, the
// standard robots rules even on a Plain site, and a broken link; and a fraction of the hosts is discovered late:
// not seeded, linked only from the last page of another host's chain. A crawler that hands out work in fixed
// rounds waits for the slow hosts while the fast ones idle; one that keeps every host busy does not.
//
// # Measurement
//
// Each Host records every request (start and end time, target, connection id, user agent, protocol, status,
// bytes, content encoding; see Request) and keeps the number of open connections and in-flight requests and
// their maxima (MaxConns, MaxInFlight). MinGap gives the shortest gap between consecutive request starts, and
// Site.Fetches counts requests per normalised URL (for "fetched once" and "re-fetched at most the in-flight
// requests" assertions). Tests assert politeness from these server-side records: no timing enters the site
// itself. Note that MaxConns counts TCP connections, idle keep-alive ones included, and that http.Transport
// pools connections by the host as written in the URL: fetch normalised URLs, or HOST1.test:80 and host1.test
// get a connection each. Config.DisableRequestLog keeps only the counters (for long benchmarks).
//
// # Lifecycle and concurrency
//
// Start (or New) binds every listener before it returns; Stop (registered with t.Cleanup by Start) closes every
// listener and connection, aborts in-flight answers, and waits for every goroutine the site started, so a test
// that uses goleak stays clean. All methods are safe for concurrent use. With Config.HTTP2, hosts also speak
// HTTP/2 over cleartext with prior knowledge (set Transport.Protocols.SetUnencryptedHTTP2 on the client). With
// Config.TLS, every host serves HTTPS (https:// page URLs; default port 443 in DialContext) with a self-signed
// certificate that CertPool trusts, and offers HTTP/2 and HTTP/1.1 through ALPN.
package web
