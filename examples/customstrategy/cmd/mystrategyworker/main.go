// Command mystrategyworker is Frontier's cluster strategy worker with the shortpath strategy built in (run it
// in place of cmd/strategyworker, one per spider-log partition).
package main

import (
	"example.com/customstrategy/shortpath"
	"github.com/frontiercrawl/frontier/launch"
)

func main() {
	shortpath.Register()
	launch.Main("strategyworker")
}
