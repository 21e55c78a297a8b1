// Package spider is Frontier's fetcher (docs/architecture.md, "How a URL travels"): it reads its partition of the spider feed, fetches
// each request politely, and reports every outcome on the spider log, where the strategy workers and the DB
// worker pick it up.
//
// # Use
//
//	s, err := spider.New(spider.DefaultConfig(), spider.Deps{
//		Feed: feedConsumer,   // bus.Consumer on spider-feed partition p
//		Log:  logProducer,    // bus.OpenProducer(ctx, b, bus.SpiderLog): keyed as bus/topology.go declares
//		Codec: codec.Msgpack{},
//		Identity: id,         // the identity layer (nil: SimpleIdentity)
//		Handler: myHandler,   // optional output hook (e.g. the WARC writer)
//		Partition: p, Logger: log, Registerer: reg,
//	})
//	err = s.Run(ctx)          // returns nil after ctx ends and the last commit
//
// Run(ctx, cfg, deps) is New plus Run. A process runs a spider as a role of the crawl with NewRole(cfg,
// RoleDeps{Bus: b, Deps: …}): the role opens the spider log and its feed partition from the bus, owns the
// partition (a second spider for it waits as a standby), and builds a Spider for each term of ownership
// (cmd/spider and the standalone do this).
//
// # What is reported
//
// Every feed request gets exactly one outcome on the spider log, keyed by the hex domain fingerprint of its
// host (Frontera's get_host_fprint), so the owner of the host receives it:
//
//   - page_crawled for a response (any status), Response.URL the requested URL. A request that is itself a
//     redirect target carries the chain that led to it in its meta (see Redirects).
//   - links_extracted for a 2xx HTML page, split into one message per link host (docs/architecture.md, "Streams"), each keyed
//     by that host's domain fingerprint and repeating the page request. Links carry fingerprint and domain meta.
//   - request_error with a stable name (ErrorNames): DNSLookupError, ConnectionRefusedError, TimeoutError,
//     TLSError, ConnectionLost, TooManyRedirects, RedirectLoop, RobotsDisallowed, RobotsUnavailable, InvalidURL,
//     NotSupported, DecodingError, ConnectionError.
//
// # Redirects
//
// The spider does not follow a 3xx answer. It reports page_crawled for the redirecting URL (its 3xx status:
// its owner marks it CRAWLED) and the resolved Location as a one-link links_extracted, keyed like any link by
// the target host's domain fingerprint, so the owner of the target's host receives it. The link carries the
// chain so far in the keys Scrapy's redirect middleware sets and Frontera's canonical solver reads:
// redirect_urls (str, the earlier URLs, first the one the chain started from), redirect_fingerprints (hex
// bin), redirect_times (int) and redirect_reasons (the 3xx statuses); it keeps the depth and score of the
// redirecting request, and its method and body on 307 and 308. The owning strategy worker puts the target
// through the URL-seen test like any URL (strategyworker: a new target is scheduled whatever the strategy
// would do with a link, a known one is not fetched again), and the spider that owns the target's host fetches
// it, through that host's robots.txt and delay.
//
// Why: a fetcher that follows redirects itself fetches the target without asking whether it was already
// fetched. On a web where pages are reachable both directly and through a redirect that fetched one page in
// five twice (docs/architecture.md, invariant 3), and a cross-host hop broke invariant 1 (a host fetched by a spider that
// does not own it, outside that host's politeness). Asking the owner synchronously would need a request/reply
// path between roles that the streams do not have; reporting the target as a link reuses the path every URL
// already takes. The cost is latency, not throughput: a redirected page is fetched one round through the
// spider log, the strategy worker, the scoring log, the queue and the feed later (benchmarks:
// bench/results/hostile.md).
//
// A chain ends with a named request_error for the hop that would extend it: RedirectLoop when the target is
// the request itself or a URL of its chain (by fingerprint, so other spellings of the URL count), and
// TooManyRedirects past Config.MaxRedirects hops (default 20, as Scrapy). A loop between URLs already fetched
// also stops at the URL-seen test. robots.txt is the exception: it is fetched with its redirects followed
// here (RFC 9309: at least five), since it is not a page of the crawl.
//
// A body longer than Config.MaxBodyBytes is truncated there and the page's meta gets frontier_truncated=true.
//
// # Delivery and offsets
//
// The feed offset is committed only up to the last request whose outcome, and every earlier one's, the spider
// log acknowledged (a contiguous watermark over out-of-order completion). After a crash the requests after the
// watermark are fetched again (with a durable spider log and a StateDir, only those not journaled; see
// DurableProducer). After a clean stop (context cancelled) queued and in-flight requests are
// abandoned unreported, finished ones are reported, the watermark is committed, and the offsets reported
// beyond it are saved in Config.StateDir, so the next run skips them: a restart fetches again only what was in
// flight.
//
// A fetch attempt is a lease on the request's fingerprint, held from the moment the spider takes the request
// until its outcome is on the spider log (or, for a held request, back in the queue), never longer: the
// watermark over other requests does not hold it. A copy of a request whose same attempt (same retry_times
// meta) is still running is a batch the DB worker sent again; it is dropped and counted
// (frontier_spider_feed_duplicates_total). Any other copy, a retry above all, is fetched: the strategy worker
// wrote the retry's queue row before the spider could see it, so dropping it would leave the URL QUEUED with
// no queue row, never fetched.
//
// # Flow: per-host queues, decoupled from the commit
//
// The spider holds one FIFO queue per host, filled from the feed as fast as the feed delivers. How deep each
// host's queue is, is decided upstream: the DB worker's batch generator gives each host what its queue lacks
// to last one round of the loop, by Little's law over the measured time between the host's outcomes (its
// service time plus the politeness delay in effect): a host that answers in 1 ms at delay 0 gets hundreds of
// requests, a host at a 1 s delay two or three (dbworker/flow.go). The spider's part is to never make that
// demand wait for another host, and to bound what it holds:
//
//   - Config.MaxPending bounds the requests open: read from the feed and not yet reported (queued at their
//     hosts, in flight, being reported). When it is reached the feed is not read until one is reported: the
//     backpressure that bounds the per-host queues' memory.
//   - The commit watermark cannot pass a request whose outcome is not durable (Kafka commits one offset per
//     partition). That request holds the commit, not the reading: the requests after it are read, fetched and
//     reported while it runs (a slow page, a host waiting out a Crawl-delay or a back-off), each kept as an
//     offset (16 bytes) once reported, up to Config.MaxUncommitted offsets past the watermark. Before,
//     the one bound counted everything past the watermark, so a request that held it for seconds stopped the
//     feed of every host, and the fast hosts starved while the slow host's URL was in flight.
//   - The DB worker sees the spider's progress in the outcomes on the spider log, not in the committed offset
//     (which now lags further behind the work): with the flow running, a partition gets its next batch while
//     what it was sent and has not answered is below twice db_worker.feed_batch (dbworker/flow.go,
//     flowReady).
//
// Nothing about what is released changes: a request's fetch-attempt lease ends when its outcome is durable, and
// the commit moves past it only then, so a kill -9 loses nothing; what a kill costs is fetching again what was
// reported past the watermark, which the journal (DurableProducer) avoids in standalone mode and which
// MaxUncommitted bounds on Kafka.
//
// # Politeness
//
// Each host has a FIFO queue and at most Config.ConnsPerHost runners (goroutines). Every request to a host
// (robots.txt included) books a start slot at least the host's delay after the previous
// slot, and no earlier than the delay after the host's last answer (response headers received): the delay is
// Config.Delay, or the robots.txt Crawl-delay when longer (capped by MaxCrawlDelay). The second rule makes the
// gap hold as the server measures it, whatever the time between a slot and the request's arrival; with one
// connection per host the delay is in effect counted from the previous answer, as a polite crawler should. The HTTP transport also caps connections
// per host at ConnsPerHost. robots.txt (package spider/robots, RFC 9309) is fetched before any other URL of an
// origin, once however many requests wait, and cached (LRU, RobotsCacheSize origins) for RobotsTTL; 4xx allows
// everything, 5xx disallows everything for RobotsErrorTTL (those URLs are reported as RobotsUnavailable), and a
// network error does the same with the network error's name. A host that hangs holds only its own runners (and at most ConnsPerHost of
// the MaxInFlight fetch slots) until RequestTimeout; other hosts go on.
//
// # Fetching
//
// net/http with HTTP/1.1 and HTTP/2 (ALPN over TLS), a connect timeout and a whole-request timeout, no
// redirect following (see Redirects), Accept-Encoding gzip and br decoded here, and the media
// type from Content-Type or, when missing or generic, sniffed (http.DetectContentType). Only text/html and
// application/xhtml+xml bodies are parsed for links (spider/links); a PDF is fetched and reported but not
// parsed.
//
// # Memory
//
// Response bodies are the one thing whose size the web decides, so they are held under a budget
// (Config.BodyBudgetBytes, a semaphore counted in bytes, one per process: 64 MiB in a spider process by
// default, and one budget shared by every spider of a standalone process, Deps.BodyBudget, sized from
// its memory limit): a fetch keeps at most
// Config.SpillBytes (64 KiB) of its body in memory while reading, reserved from the budget in 16 KiB steps, and
// writes the rest to a temporary file (unlinked at once, in StateDir/spill); a fetch that holds part of the
// budget never waits for more (it spills instead), so the budget cannot deadlock. A spilled body comes back
// into memory only to be parsed, digested and handed to the handler, after reserving its whole size, and the
// reservation ends when the outcome is queued for the spider log. So 1,000 hosts each serving a 15 MB page hold
// at most the budget in memory, not 1,000 × MaxBodyBytes. Metrics: frontier_spider_body_bytes_in_memory(_max),
// frontier_spider_body_spills_total.
//
// When nothing reads a body after the fetch (no Deps.Handler, or one that is a BodyIgnorer, and no
// Config.SendBody: cmd/standalone without a WARC archive), a body past SpillBytes is not spilled at all: the
// rest of it is read straight through the link parser and the content digest and dropped, so it costs
// neither the file's write and read back nor a buffer of its size (issue 21: that round trip was ~9% of a
// crawl's CPU on a web of 15 MB pages); the handler then sees Body nil.
//
// # Seeds
//
// With Deps.Seeds the spider first publishes the seed file as add_seeds (see InjectSeeds for the format and
// the once-per-crawl marker).
//
// # Stats and metrics
//
// A "spider stats" line every Config.StatsInterval (pages, pages_per_min, bytes_per_s, links, errors by class,
// in_flight, pending (requests open, see Flow), uncommitted (offsets past the commit), queued, hosts,
// body_mb_in_memory and body_spills (see Memory), duplicates dropped, largest host queues) and Prometheus
// metrics frontier_spider_*.
//
// # Imports and concurrency
//
// spider sits at level L3: it imports frontier, bus (interfaces only), spider/links, spider/robots, net/http,
// golang-lru, brotli and the Prometheus client; never a concrete bus, codec or store. A Spider is used by one
// Run call; its collaborators (Feed, Log) are closed by the caller after Run returns.
package spider
