// Package all registers every built-in strategy with strategy.Default. Only the mains and the standalone mode
// import it, with a blank import.
package all

import (
	_ "github.com/frontiercrawl/frontier/strategy/basic"     // basic
	_ "github.com/frontiercrawl/frontier/strategy/depth"     // bfs, dfs
	_ "github.com/frontiercrawl/frontier/strategy/discovery" // discovery
	_ "github.com/frontiercrawl/frontier/strategy/revisit"   // revisit
)
