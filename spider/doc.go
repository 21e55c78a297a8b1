// Package spider is Frontier's fetcher (DESIGN.md §6): it reads its partition of the spider feed, fetches
// each request politely, and reports every outcome on the spider log, where the strategy workers and the DB
// worker pick it up.
//
// # Use
//
//	s, err := spider.New(spider.DefaultConfig(), spider.Deps{
//		Feed: feedConsumer,   // bus.Consumer on spider-feed partition p
//		Log:  logProducer,    // bus.Producer on the spider log, partitioner partition.Fingerprint
//		Codec: codec.Msgpack{},
//		Identity: id,         // the identity layer (nil: SimpleIdentity)
//		Handler: myHandler,   // optional output hook (e.g. the WARC writer)
//		Partition: p, Logger: log, Registerer: reg,
//	})
//	err = s.Run(ctx)          // returns nil after ctx ends and the last commit
//
// cmd/spider wires it from the configuration; Run(ctx, cfg, deps) is New plus Run.
//
// # What is reported
//
// Every feed request gets exactly one outcome on the spider log, keyed by the hex domain fingerprint of its
// host (Frontera's get_host_fprint), so the owner of the host receives it:
//
//   - page_crawled for a response (any status). After redirects, Response.URL stays the requested URL (as
//     Frontera's BasicCanonicalSolver reports it) and the request meta carries the whole chain, requested URL
//     first and answering URL last, in redirect_urls (str) and redirect_fingerprints (hex bin). A chain that
//     crosses hosts is also reported to each other host's owner: one extra page_crawled per other host, for
//     that host's URL, with its own fingerprint and domain meta and that hop's status.
//   - links_extracted for a 2xx HTML page, split into one message per link host (DESIGN.md §1), each keyed
//     by that host's domain fingerprint and repeating the page request. Links carry fingerprint and domain meta.
//   - request_error with a stable name (ErrorNames): DNSLookupError, ConnectionRefusedError, TimeoutError,
//     TLSError, ConnectionLost, TooManyRedirects, RobotsDisallowed, RobotsUnavailable, InvalidURL,
//     NotSupported, DecodingError, ConnectionError.
//
// A body longer than Config.MaxBodyBytes is truncated there and the page's meta gets frontier_truncated=true.
//
// # Delivery and offsets
//
// The feed offset is committed only up to the last request whose outcome, and every earlier one's, the spider
// log acknowledged (a contiguous watermark over out-of-order completion). After a crash the requests after the
// watermark are fetched again. After a clean stop (context cancelled) queued and in-flight requests are
// abandoned unreported, finished ones are reported, the watermark is committed, and the offsets reported
// beyond it are saved in Config.StateDir, so the next run skips them: a restart fetches again only what was in
// flight.
//
// # Politeness
//
// Each host has a FIFO queue and at most Config.ConnsPerHost runners (goroutines). Every request to a host
// (robots.txt and redirect hops included) books a start slot at least the host's delay after the previous
// slot, and no earlier than the delay after the host's last answer (response headers received): the delay is
// Config.Delay, or the robots.txt Crawl-delay when longer (capped by MaxCrawlDelay). The second rule makes the
// gap hold as the server measures it, whatever the time between a slot and the request's arrival; with one
// connection per host the delay is in effect counted from the previous answer, as a polite crawler should. The HTTP transport also caps connections
// per host at ConnsPerHost. robots.txt (package spider/robots, RFC 9309) is fetched before any other URL of an
// origin, once however many requests wait, and cached (LRU, RobotsCacheSize origins) for RobotsTTL; 4xx allows
// everything, 5xx disallows everything for RobotsErrorTTL (those URLs are reported as RobotsUnavailable), and a
// network error does the same with the network error's name. A redirect hop to another host passes that
// host's robots.txt and delay too. A host that hangs holds only its own runners (and at most ConnsPerHost of
// the MaxInFlight fetch slots) until RequestTimeout; other hosts go on.
//
// # Fetching
//
// net/http with HTTP/1.1 and HTTP/2 (ALPN over TLS), a connect timeout and a whole-request timeout, our own
// redirect loop (so each hop is checked and reported), Accept-Encoding gzip and br decoded here, and the media
// type from Content-Type or, when missing or generic, sniffed (http.DetectContentType). Only text/html and
// application/xhtml+xml bodies are parsed for links (spider/links); a PDF is fetched and reported but not
// parsed.
//
// # Seeds
//
// With Deps.Seeds the spider first publishes the seed file as add_seeds (see InjectSeeds for the format and
// the once-per-crawl marker).
//
// # Stats and metrics
//
// A "spider stats" line every Config.StatsInterval (pages, pages_per_min, bytes_per_s, links, errors by class,
// in_flight, pending, queued, hosts, largest host queues) and Prometheus metrics frontier_spider_*.
//
// # Imports and concurrency
//
// spider sits at level L3: it imports frontier, bus (interfaces only), spider/links, spider/robots, net/http,
// golang-lru, brotli and the Prometheus client; never a concrete bus, codec or store. A Spider is used by one
// Run call; its collaborators (Feed, Log) are closed by the caller after Run returns.
package spider
