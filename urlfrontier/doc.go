// Package urlfrontier serves the URLFrontier v2 gRPC API (crawler-commons url-frontier: package urlfrontier,
// service URLFrontier, every RPC) so that crawlers in other stacks (StormCrawler, Python or Go fetchers,
// browser farms) use Frontier as their frontier. `standalone --urlfrontier ADDR` and cmd/urlfrontier run it
// (docs/urlfrontier.md).
//
// urlfrontierpb/urlfrontier.proto is Frontier's own transcription of the published API, wire-compatible
// (same names and numbers); the Go code generated from it is committed, and gen.sh regenerates it.
//
// # Layers
//
// Server translates the wire messages to calls of a Backend, the small Go interface of what the API needs of a
// frontier (put, lease, queue settings, listings). Store is a Backend of its own (put, lease and queue state in
// Pebble). Gateway is the Backend that stands where a spider stands: it owns spider-feed partitions, fills a
// local Store from them (the feed's requests are a third kind of put: added when unknown or done, a replay
// skipped), and publishes what clients report on the spider log (gateway.go). Server and the conformance suite
// (conformance_test.go) are the same over both.
//
// # Where it runs, and what it is not yet
//
// `standalone --urlfrontier ADDR` runs a Gateway over the standalone's own streams and stores: without seeds
// it owns every feed partition and no spider runs; with seeds the standalone's spiders crawl them and the
// gateway owns a feed partition of its own beside theirs (one crawl, its hosts split between the spiders and the API's
// clients). On the cluster cmd/urlfrontier runs the Gateway of one feed partition in place of its spider.
// Either way a discovered URL goes round the crawl's loop (the strategy worker's URL-seen test and scope, the
// DB worker's queue) before GetURLs hands it out, and a known put is the page_crawled a spider would send; a
// discovered put's OK means "on the spider log", not "new to the crawl". The Gateway commits a feed offset
// once the request is durable in its store (a synced write: gateway_durability_test.go), not once its outcome
// is on the spider log as a spider does: a URL a client never reports would otherwise hold the partition's
// commit, and with it the DB worker's batches; the price is that a standby on another machine does not see
// what a dead gateway held (docs/urlfrontier.md). The cluster's gateway follows the control stream (pause,
// block: gateway_control.go). GetURLStatus answers for the crawl, from the crawl's states and page metadata
// for a URL the gateway does not hold (gateway_listing.go).
//
// Not yet: ListURLs, CountURLs, the deletes and PurgeURLs are the gateway's store's (the URLs it holds or
// held), not the crawl's states and metadata.
//
// What the Store gives beyond the reference service: leases, delays, blocks, limits and SetActive are stored
// and outlive a restart.
//
// # Semantics
//
//   - A queue per (crawl ID, key); an empty key is the URL's host. The same URL in two queues or two crawls is
//     two URLs (as in the reference service). An empty crawl ID is "DEFAULT".
//   - A discovered URL is added only if unknown (otherwise SKIPPED); a known URL is always written: with
//     refetchable_from_date > 0 it is due from that second (the queue is ordered by due time), with 0 it is
//     done for good and counts as completed. A discovered URL is due at its discovery time.
//   - GetURLs visits the queues round-robin from where the last call stopped, skips a queue that is blocked, at
//     its crawl limit (completed ≥ limit) or within its delay since it last sent, and takes up to
//     max_urls_per_queue due URLs from each of up to max_queues queues. Every URL handed out is leased for
//     delay_requestable seconds (30 when 0): its place in the queue moves to the lease's end, so it is not
//     handed out again until a known put for it arrives or the lease ends, and a lease held by a fetcher that
//     died ends by itself. The decision and the lease are one write under one lock, so two clients never hold
//     the same URL at once.
//   - SetDelay with a key sets that queue's delay, with an empty key the default (1 s until set). A client
//     that reports a Crawl-delay in a known put's metadata ("crawl-delay", or StormCrawler's
//     "robots.crawl.delay", in seconds) sets its queue's delay.
//   - The reference's per-queue cap on URLs in process is not applied: a leased URL is not due, and the
//     queue's delay spaces its sends.
//   - SetLogLevel sets the level of the process's logger (one level; the package name is only logged). The
//     `local` flags are accepted and ignored: the standalone is one node, which ListNodes names.
//
// # Key layout
//
//	u crawl 0 key 0 url          → URL record: refetch, due (ms), created, lease end, metadata
//	s crawl 0 key 0 due:u64 url  → (empty) the queue's order; present while the URL is not done
//	l crawl 0 key 0 url          → lease end (ms): what GetStats counts as in process
//	q crawl 0 key                → queue record: delay, blocked until, limit, completed, active, last sent
//	o d | o a                    → the default delay | present while the frontier is inactive
//
// A put, a lease and the queue counters they change are one Pebble batch, so the counters are exact after a
// crash. The queue records (a few dozen bytes each) are held in memory; URLs are not.
package urlfrontier
