package spider

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSeeds(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		valid         int
		want          []string // substrings of the error; none means no error
	}{
		{"ok.txt", "# c\nhttp://a.test/\nftp://x/\n", 1, nil},
		{"empty.txt", "", 0, []string{"empty.txt is empty"}},
		{"comments.txt", "# only\n\n", 0, []string{"no URL in its 2 lines"}},
		{"bad.txt", "ftp://x/\nnot a url\nhttp://\nexample.com\nhttp://a.test/ b\nx://y\nz://w\n", 0, []string{
			`bad.txt has no valid URL: line 1: "ftp://x/": not an http or https URL: scheme "ftp"`,
			`line 2: "not a url": more than one word`, `line 3: "http://": empty host`,
			`line 4: "example.com": not an absolute URL`, "and 2 more invalid lines"}},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := CheckSeeds(p)
		if tc.want == nil {
			if err != nil || n != tc.valid {
				t.Errorf("%s: CheckSeeds = %d, %v; want %d, nil", tc.name, n, err, tc.valid)
			}
			continue
		}
		var ns *NoSeedsError
		if !errors.As(err, &ns) {
			t.Errorf("%s: CheckSeeds error %v is not a *NoSeedsError", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tc.name, err, w)
			}
		}
		if strings.Count(err.Error(), "identity:") > 0 || strings.Count(err.Error(), "spider:") > 0 {
			t.Errorf("%s: error %q repeats package prefixes", tc.name, err)
		}
	}
	if _, err := CheckSeeds(filepath.Join(dir, "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("CheckSeeds of a missing file = %v, want an error naming it", err)
	}
}
