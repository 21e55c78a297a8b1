package scope

import (
	"slices"
	"testing"
)

// FuzzCheck: Check never panics on any input and answers "" or one of Reasons.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"http://a.test/", "https://a.test/s/x/x/x/x/", "ftp://x", "http://a.test/a.PNG?x=1",
		"http://[::1]:80/%zz", "http://a.test/" + string(make([]byte, 3000)), "", ":", "http://a.test/../../a/./b"} {
		f.Add(s)
	}
	cfg := DefaultConfig()
	cfg.Include, cfg.Exclude = []string{`a\.test`}, []string{`/logout`}
	flt, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if r := flt.Check(raw); r != "" && !slices.Contains(Reasons, r) {
			t.Fatalf("Check(%q) = %q, not a reason", raw, r)
		}
		_ = flt.Key(raw)
		_ = Domain(raw)
	})
}
