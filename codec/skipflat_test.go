package codec

import (
	"testing"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/internal/cputime"
)

// checkSkipFlat holds skipFlat to skipWalk on data: where skipFlat passes over a value, skipWalk accepts it and
// ends at the same byte; where it does not, the cursor has not moved.
func checkSkipFlat(t *testing.T, data []byte) {
	t.Helper()
	if len(data) == 0 || data[0]&0xf0 != 0x80 {
		return
	}
	fast := mpReader{b: data}
	if !fast.skipFlat() {
		if fast.off != 0 {
			t.Fatalf("skipFlat declined but moved to %d\n%x", fast.off, data)
		}
		return
	}
	walk := mpReader{b: data}
	if err := walk.skipWalk(0); err != nil || walk.off != fast.off {
		t.Fatalf("skipFlat ends at %d, skipWalk at %d (%v)\n%x", fast.off, walk.off, err, data)
	}
}

// skipFlatCases: a domain map as the spider writes it (bin keys and values), str keys, an empty map, a nested
// map (declined), a str that is not UTF-8, lengths past the end, a str 8 and a bin 8, a map of 15 entries.
func skipFlatCases(tb testing.TB) [][]byte {
	dom := benchRequest(3).Meta[1].Value.(frontier.Map)
	enc := func(v frontier.Value) []byte {
		b, err := Msgpack{}.EncodeRequest(&frontier.Request{URL: "u", Meta: frontier.Map{{Key: []byte("v"), Value: v}}})
		if err != nil {
			tb.Fatal(err)
		}
		// the meta map is the request array's last element: a fixmap of one entry, key "v" (bin 8, 1 byte)
		i := len(b) - 1
		for ; i >= 0 && !(b[i] == 0x81 && i+3 < len(b) && b[i+1] == 0xc4 && b[i+2] == 1 && b[i+3] == 'v'); i-- {
		}
		return b[i+4:]
	}
	cases := [][]byte{
		enc(dom),
		unhex(tb, "80"),
		unhex(tb, "82 a1 61 a1 62 a1 63 c4 01 64"),
		unhex(tb, "81 a1 61 81 a1 62 a1 63"), // nested
		unhex(tb, "81 a1 61 a1 ff"),          // str not UTF-8
		unhex(tb, "81 a1 61 a5 62"),          // past the end
		unhex(tb, "81 c4 05 61"),             // bin past the end
		unhex(tb, "81 d9 02 61 62 c4 00"),
		unhex(tb, "81 d9"),
		unhex(tb, "81 a1 61 01"), // an int value: declined
		unhex(tb, "82 a1 61 a1 62"),
	}
	big := []byte{0x8f}
	for i := range 15 {
		big = append(big, 0xa1, byte('a'+i), 0xc4, 1, byte(i))
	}
	return append(cases, big)
}

func TestSkipFlat(t *testing.T) {
	for _, c := range skipFlatCases(t) {
		for cut := range len(c) + 1 {
			checkSkipFlat(t, c[:cut])
		}
	}
	// The spider's domain map is passed over by skipFlat, not walked.
	d := mpReader{b: skipFlatCases(t)[0]}
	if !d.skipFlat() || d.off != len(d.b) {
		t.Fatalf("skipFlat does not pass over a domain map (at %d of %d)", d.off, len(d.b))
	}
}

// FuzzSkipFlat holds skipFlat to skipWalk (checkSkipFlat) on any input; the decoders' own fuzz targets
// (FuzzDecode, FuzzDecodeLinksMeta, FuzzDecodeSkim) skip through it too. Seeds: skipFlatCases.
//
//	go test -run '^$' -fuzz FuzzSkipFlat -fuzztime 30s ./codec/
func FuzzSkipFlat(f *testing.F) {
	for _, c := range skipFlatCases(f) {
		f.Add(c)
	}
	f.Fuzz(checkSkipFlat)
}

// BenchmarkSkipDomain is skip over a meta domain map as the spider writes it (7 bin fields), what the DB
// worker's decode does for each domain map it does not keep or looks up (sharedAcross): ns and CPU per map.
//
//	go test -run '^$' -bench SkipDomain ./codec/
func BenchmarkSkipDomain(b *testing.B) {
	raw := skipFlatCases(b)[0]
	var cpu0 = cputime.Process()
	for b.Loop() {
		d := mpReader{b: raw}
		if err := d.skip(2); err != nil || d.off != len(raw) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/(cputime.Process()-cpu0).Seconds(), "maps/cpu-s")
}
