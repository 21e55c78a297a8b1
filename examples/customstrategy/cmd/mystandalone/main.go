// Command mystandalone is Frontier's standalone program with one more strategy, shortpath, built in: the
// same flags, configuration and behaviour as cmd/standalone. Run it with
//
//	mystandalone --seeds seeds.txt --set strategy_worker.strategy=shortpath --set strategy_worker.options.max_segments=3
package main

import (
	"example.com/customstrategy/shortpath"
	"github.com/frontiercrawl/frontier/launch"
)

func main() {
	shortpath.Register()
	launch.Main("standalone")
}
