package frontier

import (
	"testing"
	"time"
)

// TestCloneBytesCapped checks that the cloned bytes, cut from one allocation, do not overwrite each other on
// append, and that nil and empty values keep their shape.
func TestCloneBytesCapped(t *testing.T) {
	orig := Map{{Key: []byte("a"), Value: []byte("xy")}, {Key: []byte("b"), Value: []byte("zw")},
		{Key: []byte("n"), Value: []byte(nil)}, {Key: []byte("e"), Value: []byte{}}, {Key: []byte("m"), Value: Map(nil)}}
	c := orig.Clone()
	a := c[0].Value.([]byte)
	_ = append(a, '!')
	if string(c[1].Value.([]byte)) != "zw" || string(orig[0].Value.([]byte)) != "xy" {
		t.Fatalf("append to a cloned value wrote into another: %q %q", c[1].Value, orig[0].Value)
	}
	if c[2].Value.([]byte) != nil || c[3].Value.([]byte) == nil || c[4].Value.(Map) != nil {
		t.Errorf("nil/empty values changed shape: %#v", c[2:])
	}
	if v := CloneValue([]byte("q")).([]byte); string(v) != "q" || cap(v) != 1 {
		t.Errorf("CloneValue: %q cap %d", v, cap(v))
	}
}

// BenchmarkMapClone clones a spider-feed request's meta (fingerprint, domain map of seven bins, score, depth,
// discovery time, digest): what the spider does for every request it reports.
//
//	go test -run '^$' -bench BenchmarkMapClone .
func BenchmarkMapClone(b *testing.B) {
	r := &Request{URL: "http://127.0.0.1:8080/p/1"}
	r.SetMetaFingerprint(make(Fingerprint, 20))
	r.SetMetaDomain(MetaDomain{Netloc: "127.0.0.1:8080", Name: "127.0.0.1", Scheme: "http", SLD: "127.0.0.1",
		Fingerprint: "da39a3ee5e6b4b0d3255bfef95601890afd80709"})
	r.Meta.Set(MetaKeyScore, 0.5)
	r.SetMetaDepth(3)
	r.Meta.Set("frontier_discovered", int64(1764100000000))
	r.Meta.Set("frontier_digest", []byte("da39a3ee5e6b4b0d3255bfef95601890afd80709"))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		_ = r.Meta.Clone()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "clones/s")
}
