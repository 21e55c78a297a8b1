// Command standalone runs Frontier in one process (docs/architecture.md): spiders, strategy workers and the DB worker as
// goroutines over the in-process bus and Pebble (package standalone). It is the quick start, and the right tool
// for a crawl that fits one machine.
//
// Usage:
//
//	standalone --demo                          crawl a synthetic 10-host site served on 127.0.0.2… and check
//	                                           the crawl against the site's ground truth (no network needed)
//	standalone --seeds FILE [--config F]       crawl from the seed URLs of FILE (one a line, # comments)
//	standalone [--config F]                    resume the crawl kept in standalone.data_dir
//	--set key=value                            override any configuration key (configs/standalone.yaml)
//
// The process stops by itself when the crawl is finished (standalone.stop_when_done), or on SIGTERM, after
// draining and committing.
package main

import "github.com/frontiercrawl/frontier/launch"

func main() { launch.Main("standalone") }
