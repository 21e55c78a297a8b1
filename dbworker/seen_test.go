package dbworker

import (
	"fmt"
	"testing"
)

func TestSeenSet(t *testing.T) {
	s := newSeenSet(4) // two generations of 2
	fp := func(i int) []byte { return []byte(fmt.Sprintf("fp%d", i)) }
	for i := range 3 {
		s.add(fp(i))
	}
	// fp0, fp1 were in the first generation, now the older one; fp2 in the current one.
	for i, want := range []bool{true, true, true, false} {
		if got := s.has(fp(i)); got != want {
			t.Errorf("after 3 adds: has(fp%d) = %v, want %v", i, got, want)
		}
	}
	s.add(fp(3))
	s.add(fp(4)) // the current generation (fp2, fp3) is full: it becomes the older, fp0 and fp1 are dropped
	for i, want := range []bool{false, false, true, true, true} {
		if got := s.has(fp(i)); got != want {
			t.Errorf("after 5 adds: has(fp%d) = %v, want %v", i, got, want)
		}
	}
	var none *seenSet = newSeenSet(0)
	none.add(fp(1))
	if none.has(fp(1)) {
		t.Error("a zero-size set remembers")
	}
}
