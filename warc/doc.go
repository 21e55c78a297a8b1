// Package warc writes WARC/1.1 files, the format of web archives (ISO 28500; Heritrix, StormCrawler and Common
// Crawl write it): one gzip member per record, files rotated by size, safe for concurrent use.
//
// No maintained Go WARC library is served by the module proxy these builds use (internetarchive/gowarc,
// nlnwa/gowarc and CorentinB/warc are refused; slyrz/warc is unmaintained since 2015), and the format is small,
// so this package writes it itself. Its files are validated in the tests by an independent reader, Python's
// warcio (oracle/check_warc.py: every record parsed, block and payload digests checked, one gzip member per
// record), besides this package's own Reader.
//
// It imports no Frontier package (level L1) and no network client.
//
// # What is written
//
// Each file begins with a warcinfo record (software, format, conformsTo, hostname, operator, ... and
// WARC-Filename). WriteExchange writes one fetch as three contiguous records in one file:
//
//   - request: the HTTP request as sent, Content-Type application/http;msgtype=request;
//   - response: the response head and body, Content-Type application/http;msgtype=response,
//     WARC-IP-Address, WARC-Payload-Digest (over the body), WARC-Truncated when the body was cut;
//   - metadata (if Exchange.Metadata is not empty): application/warc-fields, e.g. fetchTimeMs, outlink.
//
// Every record has WARC-Record-ID (<urn:uuid:…>, random), WARC-Date (UTC, microseconds), WARC-Target-URI,
// Content-Length and WARC-Block-Digest; digests are "sha1:" + base32, as Heritrix and warcio write them. The
// request and metadata records carry WARC-Concurrent-To: the response's id. Write writes arbitrary records.
//
// # Files
//
// Files are named Prefix-Timestamp-Serial-Hostname.warc.gz, e.g. frontier-20261122051503123-00000-spider3.warc.gz:
// Timestamp is the UTC time the file was opened to the millisecond (17 digits), Serial counts the files of a
// Writer from 00000 (skipping names that exist). A file is written as name+".open" and renamed when it is
// finished, so a file without the suffix is complete. Before a write, a file that has reached
// Config.MaxFileSize is finished and a new one opened; a file can exceed the limit by one call's records.
//
// A Writer killed before Close leaves its file with the ".open" suffix, which WARC tools skip. New recovers
// such files of its own prefix and host name (RecoverFile): it keeps the longest prefix of whole records (each
// a complete gzip member, CRC checked, holding one record that parses: WholeRecords), cuts the torn tail,
// syncs, and renames the file to its final name; a file with no whole record is removed. A Writer holds an
// advisory lock (flock) on the file it writes, so a second Writer starting in the same directory with the same
// host name leaves a live writer's file alone; the lock dies with the process, so a killed writer's file is
// recovered.
//
// # Concurrency and durability
//
// A Writer is safe for concurrent use. Each call digests and compresses its records in the calling goroutine
// and then appends them under a lock, so fetchers writing in parallel use several cores, and the records of
// one call are contiguous. Writes go through a buffer: Flush writes it out and fsyncs the file, so call Flush
// before committing or journaling the feed offsets of what was archived (docs/architecture.md, invariant 2): the spider
// flushes once per spider-log report batch before it journals the batch's offsets (spider/journal.go), and
// before every feed commit, so the cost is one fsync per batch, not per record. Close flushes, syncs,
// closes and renames the last file; the owner of the Writer must call it. An I/O error is sticky: every later
// call returns it, and the damaged file keeps its ".open" name.
//
// The package imports no metrics library: Stats returns the counters (records, compressed and uncompressed
// bytes) for the caller's metrics, and Files the finished files.
//
// # Use from the spider
//
//	w, err := warc.New(cfg, logger) // cfg := warc.DefaultConfig(); cfg.Dir = "…"; cfg.Hostname = "spider3"
//	defer w.Close()
//	...
//	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
//	req.Header.Set("User-Agent", ua)
//	req.Header.Set("Accept-Encoding", "gzip, br") // set explicitly: the Transport then leaves the body encoded
//	var ip string // from httptrace.ClientTrace.GotConn: info.Conn.RemoteAddr()
//	resp, err := client.Do(req)
//	body, truncated := readAtMost(resp.Body, maxBody)
//	_, err = w.WriteExchange(&warc.Exchange{
//		URL: u, Date: start, IP: ip,
//		Request:      warc.RequestHead(req),
//		ResponseHead: warc.ResponseHead(resp, len(body), false), // body stored as received
//		Body:         body,
//		Truncated:    map[bool]string{true: "length"}[truncated],
//		Metadata:     warc.Fields{{Name: "fetchTimeMs", Value: "12"}},
//	})
//
// A Go client reads bodies de-chunked, and decompressed if the Transport added Accept-Encoding itself.
// ResponseHead keeps the head consistent with the stored body the way StormCrawler and Common Crawl do
// (X-Crawler-Transfer-Encoding, X-Crawler-Content-Encoding, X-Crawler-Content-Length); pass decoded=true if
// the stored body is one you decompressed yourself. Validate the output with
//
//	.venv/oracle/bin/python oracle/check_warc.py --names DIR
package warc
