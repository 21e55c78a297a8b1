package identity

import (
	"encoding/json"
	"os"
	"testing"
)

// TestUnicodeVectors holds the Python pieces behind non-ASCII hosts (NFKC under Unicode 14 and 3.2,
// str.lower, the idna codec) to the interpreter's own output on generated strings.
func TestUnicodeVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/canon/unicode.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []map[string]string `json:"vectors"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	fails := 0
	check := func(what, s, got, want string) {
		if got != want {
			fails++
			t.Errorf("%s(%+q) = %+q, want %+q", what, s, got, want)
		}
	}
	for _, v := range f.Vectors {
		s := v["s"]
		check("nfkc14", s, nfkc14(s), v["nfkc14"])
		check("nfkc32", s, tables().norm32.nfkc(s), v["nfkc32"])
		check("lower", s, pyLower(s), v["lower"])
		got, err := pyIDNAEncode(s)
		if want, ok := v["idna"]; ok {
			if err != nil {
				fails++
				t.Errorf("idna(%+q): %v, want %q", s, err, want)
			} else {
				check("idna", s, got, want)
			}
		} else if err == nil {
			fails++
			t.Errorf("idna(%+q) = %q, want error %s", s, got, v["idna_err"])
		}
		if fails > 30 {
			t.Fatal("too many failures")
		}
	}
}
