package dbworker

import (
	"encoding/hex"

	"github.com/frontiercrawl/frontier"
)

// seenSet remembers the fingerprints of links the links role has recorded lately, in two generations of at
// most half its size each: when the current one is full, the older is dropped and the current becomes the
// older. So memory is bounded and a link seen again soon is recognised. Not safe for concurrent use (the
// links role is one goroutine).
type seenSet struct {
	half      int
	cur, prev map[string]struct{}
}

// seenEntryBytes is about what one remembered fingerprint costs in the Go heap: its key, its map slot and the
// maps' slack, both generations together (Config.LinksCache's default, 500,000, takes about 40 MB).
const seenEntryBytes = 80

// LinksCacheIn is the largest Config.LinksCache whose set fits in bytes.
func LinksCacheIn(bytes int64) int { return int(bytes / seenEntryBytes) }

func newSeenSet(size int) *seenSet {
	if size <= 0 {
		return nil
	}
	half := max(1, size/2)
	return &seenSet{half: half, cur: make(map[string]struct{}, half)}
}

// has reports whether fp was added and is still remembered. A nil set remembers nothing.
func (s *seenSet) has(fp []byte) bool {
	if s == nil {
		return false
	}
	if _, ok := s.cur[string(fp)]; ok {
		return true
	}
	_, ok := s.prev[string(fp)]
	return ok
}

func (s *seenSet) add(fp []byte) {
	if s == nil || s.has(fp) {
		return
	}
	if len(s.cur) >= s.half {
		s.prev, s.cur = s.cur, make(map[string]struct{}, s.half)
	}
	s.cur[string(fp)] = struct{}{}
}

// hasMeta is has(fp) for the fingerprint in r's meta (what r.MetaFingerprint returns), decoded from its hex on
// the stack instead of into a new slice: false where r has none or it does not parse.
func (s *seenSet) hasMeta(r *frontier.Request) bool {
	v, ok := r.Meta.Get(frontier.MetaKeyFingerprint)
	if !ok {
		return false
	}
	var h []byte
	switch v := v.(type) {
	case []byte:
		h = v
	case string:
		if len(v) > 2*maxFingerprint {
			h = []byte(v)
			break
		}
		var hb [2 * maxFingerprint]byte
		h = hb[:copy(hb[:], v)]
	default:
		return false
	}
	if len(h) > 2*maxFingerprint {
		fp, err := frontier.ParseFingerprintHex(h)
		return err == nil && s.has(fp)
	}
	var b [maxFingerprint]byte
	n, err := hex.Decode(b[:], h)
	return err == nil && s.has(b[:n])
}

// maxFingerprint is the longest fingerprint hasMeta decodes on the stack (a sha1 is 20 bytes).
const maxFingerprint = 32
