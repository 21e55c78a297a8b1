package identity

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

type canonVectorFile struct {
	Python          string              `json:"python"`
	W3lib25Version  string              `json:"w3lib25_version"`
	W3lib122Version string              `json:"w3lib122_version"`
	Vectors         []map[string]string `json:"vectors"`
}

func loadCanonVectors(t testing.TB) canonVectorFile {
	t.Helper()
	b, err := os.ReadFile("testdata/canon/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f canonVectorFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func vectorInput(t testing.TB, v map[string]string) string {
	if b64, ok := v["b64"]; ok {
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	return v["in"]
}

// TestCanonicalizeVectors checks every generated vector (oracle/gen_canon.py vectors) in both modes and
// with each option w3lib was run with.
func TestCanonicalizeVectors(t *testing.T) {
	f := loadCanonVectors(t)
	if len(f.Vectors) < 2000 {
		t.Fatalf("only %d vectors", len(f.Vectors))
	}
	t.Logf("%d vectors from w3lib %s and %s on Python %s", len(f.Vectors), f.W3lib25Version, f.W3lib122Version, f.Python)
	modes := []struct {
		prefix string
		mode   CanonMode
	}{{"w3lib25", CanonW3lib25}, {"w3lib122", CanonW3lib122}}
	variants := []struct {
		suffix string
		opts   CanonOptions
	}{{"", CanonOptions{}}, {"_frag", CanonOptions{KeepFragments: true}}, {"_noblank", CanonOptions{DropBlankValues: true}}}
	for _, m := range modes {
		t.Run(m.prefix, func(t *testing.T) {
			fails := 0
			for _, v := range f.Vectors {
				in := vectorInput(t, v)
				for _, vr := range variants {
					o := vr.opts
					o.Mode = m.mode
					got, err := o.Canonicalize(in)
					want, wantOK := v[m.prefix+"_out"+vr.suffix]
					wantErr := v[m.prefix+"_err"+vr.suffix]
					switch {
					case wantOK && err != nil:
						t.Errorf("%s%s(%q): error %v, want %q", m.prefix, vr.suffix, in, err, want)
						fails++
					case wantOK && got != want:
						t.Errorf("%s%s(%q)\n got %q\nwant %q", m.prefix, vr.suffix, in, got, want)
						fails++
					case !wantOK && err == nil:
						t.Errorf("%s%s(%q) = %q, want an error (w3lib: %s)", m.prefix, vr.suffix, in, got, wantErr)
						fails++
					case !wantOK && !errors.Is(err, ErrInvalidURL):
						t.Errorf("%s%s(%q): error %v does not wrap ErrInvalidURL", m.prefix, vr.suffix, in, err)
					}
					if fails > 40 {
						t.Fatal("too many failures")
					}
				}
			}
		})
	}
}

// TestCanonicalizeSpecTable is the table of Frontera 0.8's canonicalization rules, which describes w3lib 1.17–1.22,
// plus what w3lib 2.5 makes of the same inputs.
func TestCanonicalizeSpecTable(t *testing.T) {
	for _, tc := range []struct{ in, want122, want25 string }{
		{"HTTP://WWW.Example.COM:80/a%7eb/%2fc%3F/%41?q=%7e&z&b=a+b;c=d#frag",
			"http://www.example.com:80/a~b/%2Fc%3F/A?b=a+b&c=d&q=~&z=",
			"http://www.example.com:80/a~b/%2Fc%3F/A?b=a+b%3Bc%3Dd&q=~&z="},
		{"http://user:PASS@Example.com:/p;params?x=1", "http://user:pass@example.com/p;params?x=1",
			"http://user:PASS@example.com/p;params?x=1"},
		{"http://www.exämple.com/", "http://www.xn--exmple-cua.com/", "http://www.xn--exmple-cua.com/"},
		{"http://x.com/?c=%E9", "http://x.com/?c=%E9", "http://x.com/?c=%E9"},
		{"http://x.com?x=é", "http://x.com/?x=%C3%A9", "http://x.com/?x=%C3%A9"},
		{"http://x.com/?u=top.rbc.ru/politics/14", "http://x.com/?u=top.rbc.ru%2Fpolitics%2F14", "http://x.com/?u=top.rbc.ru%2Fpolitics%2F14"},
		{"http://x.com/%2541/%23", "http://x.com/%41/#", "http://x.com/%2541/%23"},
		{"http://x.com/a/./b/../c", "http://x.com/a/./b/../c", "http://x.com/a/c"},
	} {
		for _, m := range []struct {
			mode CanonMode
			want string
		}{{CanonW3lib122, tc.want122}, {CanonW3lib25, tc.want25}} {
			got, err := CanonOptions{Mode: m.mode}.Canonicalize(tc.in)
			if err != nil || got != m.want {
				t.Errorf("%v: Canonicalize(%q) = %q, %v; want %q", m.mode, tc.in, got, err, m.want)
			}
		}
	}
}
