package strategyworker

import (
	"bytes"
	"testing"

	"github.com/frontiercrawl/frontier"
)

func TestFPIndex(t *testing.T) {
	sha20 := func(b byte) frontier.Fingerprint { return frontier.Fingerprint(bytes.Repeat([]byte{b}, 20)) }
	for _, tc := range []struct {
		name string
		put  []frontier.Fingerprint // put with their positions as indices
		get  frontier.Fingerprint
		want int32
		ok   bool
	}{
		{"empty", nil, sha20(1), 0, false},
		{"sha1 found", []frontier.Fingerprint{sha20(1), sha20(2)}, sha20(2), 1, true},
		{"sha1 missing", []frontier.Fingerprint{sha20(1)}, sha20(3), 0, false},
		{"sha1 from another slice", []frontier.Fingerprint{sha20(7)}, append(frontier.Fingerprint(nil), sha20(7)...), 0, true},
		{"short found", []frontier.Fingerprint{{1, 2, 3}, sha20(1)}, frontier.Fingerprint{1, 2, 3}, 0, true},
		{"long found", []frontier.Fingerprint{sha20(1), frontier.Fingerprint(bytes.Repeat([]byte{1}, 32))},
			frontier.Fingerprint(bytes.Repeat([]byte{1}, 32)), 1, true},
		{"prefix of a sha1 is another key", []frontier.Fingerprint{sha20(1)}, sha20(1)[:19], 0, false},
		{"sha1 is not its longer extension", []frontier.Fingerprint{frontier.Fingerprint(bytes.Repeat([]byte{1}, 21))}, sha20(1), 0, false},
		{"empty fingerprint", []frontier.Fingerprint{{}}, frontier.Fingerprint{}, 0, true},
		{"put again overwrites", []frontier.Fingerprint{sha20(1), sha20(1)}, sha20(1), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newFPIndex(len(tc.put))
			for i, fp := range tc.put {
				x.put(fp, int32(i))
			}
			got, ok := x.get(tc.get)
			if got != tc.want || ok != tc.ok {
				t.Errorf("get = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestFPIndexPutAllocatesNoKey: a SHA-1-sized fingerprint's entry costs no key allocation (the map is sized
// for it up front).
func TestFPIndexPutAllocatesNoKey(t *testing.T) {
	fps := make([]frontier.Fingerprint, 64)
	for i := range fps {
		fps[i] = sha(string(rune('a' + i)))
	}
	allocs := testing.AllocsPerRun(10, func() {
		x := newFPIndex(len(fps))
		for i, fp := range fps {
			x.put(fp, int32(i))
		}
		for _, fp := range fps {
			if _, ok := x.get(fp); !ok {
				t.Fatal("missing")
			}
		}
	})
	if allocs > 4 { // the map itself
		t.Errorf("%v allocations for 64 fingerprints, want the map's only", allocs)
	}
}

func TestHostKey(t *testing.T) {
	c := &batchContext{}
	var keys [][]byte
	hosts := []string{"a.example", "a.example", "b.example", "", "", "a.example"}
	for _, h := range hosts {
		keys = append(keys, c.hostKey(h))
	}
	for i, h := range hosts {
		if string(keys[i]) != h || keys[i] == nil {
			t.Errorf("key %d = %q, want %q", i, keys[i], h)
		}
	}
	if &keys[0][0] != &keys[1][0] {
		t.Error("a run of one host does not share its key")
	}
	if &keys[1][0] == &keys[5][0] {
		t.Error("a host met again after another shares a key it should have made anew")
	}
}
