package strategyworker

import (
	"crypto/sha1"

	"github.com/frontiercrawl/frontier"
)

// fpIndex maps the batch's fingerprints to their indices (batchContext.idx). A SHA-1-sized fingerprint, what the
// spiders and Frontera give, is keyed by its bytes as an array, so adding one allocates no key (a map[string]
// assignment converts, so copies, the key: one allocation per new fingerprint); a fingerprint of another length
// goes to a string-keyed map. Fingerprints of different lengths are different keys either way.
type fpIndex struct {
	sha   map[[sha1.Size]byte]int32
	other map[string]int32 // made at the first fingerprint of another length
}

func newFPIndex(n int) fpIndex { return fpIndex{sha: make(map[[sha1.Size]byte]int32, n)} }

// get returns fp's index, if fp was put.
func (x *fpIndex) get(fp frontier.Fingerprint) (int32, bool) {
	if len(fp) == sha1.Size {
		i, ok := x.sha[[sha1.Size]byte(fp)]
		return i, ok
	}
	i, ok := x.other[string(fp)] // no allocation: the conversion is the lookup's key only
	return i, ok
}

// put sets fp's index to i.
func (x *fpIndex) put(fp frontier.Fingerprint, i int32) {
	if len(fp) == sha1.Size {
		x.sha[[sha1.Size]byte(fp)] = i
		return
	}
	if x.other == nil {
		x.other = map[string]int32{}
	}
	x.other[string(fp)] = i
}
