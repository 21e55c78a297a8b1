// Command spider runs one spider: it fetches the requests of its spider-feed partition politely and reports
// every outcome on the spider log (package spider has the details).
//
// Usage: spider --config configs/spider.yaml --partition-id N [--seeds FILE] [--set key=value]…
//
// With --seeds, the seed URLs of FILE (one a line, # comments) are published as add_seeds first, once per
// crawl (see spider.Spider.InjectSeeds). The configuration gives the Kafka brokers, topics, codec and identity,
// the spider section (politeness, timeouts, sizes: spider.Config) and, when warc.dir is set, the WARC output
// (every fetched response archived through spider/archive). stats_interval and shutdown_timeout are the
// common keys. The spider follows the control stream: the requests of a host blocked with frontierctl block
// are not fetched but returned to the queue.
package main

import "github.com/frontiercrawl/frontier/launch"

func main() { launch.Main("spider") }
