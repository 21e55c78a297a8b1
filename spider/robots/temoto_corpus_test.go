package robots

import (
	"testing"

	"github.com/temoto/robotstxt"
)

// TestTemotoOnCorpus counts the corpus cases github.com/temoto/robotstxt gets wrong (logged, not failed: it is
// the evidence for the package doc's choice, and the count shows if temoto improves).
func TestTemotoOnCorpus(t *testing.T) {
	wrong, errs := 0, 0
	for i, c := range corpus {
		td, err := robotstxt.FromString(c.txt)
		if err != nil {
			errs++
			t.Logf("case %d (%s): temoto rejects the file: %v", i, c.group, err)
			continue
		}
		p := pathQuery(t, c.rawURL)
		if p == "" {
			p = "/"
		}
		if got := td.TestAgent(p, c.agent); got != c.want {
			wrong++
			t.Logf("case %d (%s): agent %q, %s: temoto %v, want %v", i, c.group, c.agent, c.rawURL, got, c.want)
		}
	}
	t.Logf("temoto/robotstxt: %d of %d corpus cases wrong, %d files rejected", wrong, len(corpus), errs)
}
