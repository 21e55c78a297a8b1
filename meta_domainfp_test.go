package frontier

import "testing"

// TestMetaDomainFingerprint holds MetaDomainFingerprint to MetaDomain().Fingerprint ("" where it fails).
func TestMetaDomainFingerprint(t *testing.T) {
	if metaDomainKeys[metaDomainFingerprintIndex] != "fingerprint" {
		t.Fatalf("metaDomainFingerprintIndex %d is %q", metaDomainFingerprintIndex, metaDomainKeys[metaDomainFingerprintIndex])
	}
	fp := []byte("0123abcd")
	for _, dom := range []Value{
		Map{{Key: []byte("name"), Value: []byte("a")}, {Key: []byte("fingerprint"), Value: fp}},
		Map{{Key: "fingerprint", Value: "str"}},
		Map{{Key: []byte("fingerprint"), Value: nil}},
		Map{{Key: []byte("fingerprint"), Value: fp}, {Key: []byte("tld"), Value: int64(1)}},
		Map{{Key: []byte("fingerprint"), Value: int64(1)}},
		Map{{Key: []byte("fingerprint"), Value: fp}, {Key: "fingerprint", Value: []byte("second")}},
		Map{{Key: []byte("name"), Value: []byte("a")}},
		[]byte("not a map"),
		nil,
	} {
		r := &Request{URL: "http://a/", Meta: Map{{Key: []byte(MetaKeyDomain), Value: dom}}}
		want := ""
		if d, err := r.MetaDomain(); err == nil {
			want = d.Fingerprint
		}
		if got := r.MetaDomainFingerprint(); got != want {
			t.Errorf("%v: MetaDomainFingerprint() = %q, MetaDomain gives %q", dom, got, want)
		}
	}
	if got := (&Request{}).MetaDomainFingerprint(); got != "" {
		t.Errorf("no meta: %q", got)
	}
}
