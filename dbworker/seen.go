package dbworker

// seenSet remembers the fingerprints of links the links role has recorded lately, in two generations of at
// most half its size each: when the current one is full, the older is dropped and the current becomes the
// older. So memory is bounded and a link seen again soon is recognised. Not safe for concurrent use (the
// links role is one goroutine).
type seenSet struct {
	half      int
	cur, prev map[string]struct{}
}

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
