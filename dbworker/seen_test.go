package dbworker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier"
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

// TestSeenHasMeta holds hasMeta to has(MetaFingerprint()) for every spelling of meta fingerprint.
func TestSeenHasMeta(t *testing.T) {
	s := newSeenSet(10)
	long := strings.Repeat("ab", 40) // longer than hasMeta decodes on the stack
	for _, h := range []string{"00ff", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", long} {
		fp, _ := frontier.ParseFingerprintHex([]byte(h))
		s.add(fp)
	}
	for _, v := range []frontier.Value{nil, []byte("00ff"), "00ff", []byte("00FF"), []byte("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"),
		"0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", []byte(long), long, []byte(long + "00"), []byte("00f"), []byte("zz"),
		[]byte(""), "", int64(1), []byte("0a1b")} {
		r := &frontier.Request{URL: "http://x/"}
		if v != nil {
			r.Meta.Set(frontier.MetaKeyFingerprint, v)
		}
		fp, err := r.MetaFingerprint()
		want := err == nil && s.has(fp)
		if got := s.hasMeta(r); got != want {
			t.Errorf("hasMeta(%#v) = %v, has(MetaFingerprint()) = %v", v, got, want)
		}
	}
}
