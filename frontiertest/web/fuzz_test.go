package web

import "testing"

// FuzzNormalize: Normalize never panics, and what it returns is a fixed point (normalising it again changes
// nothing), so pages keyed by it are found from any variant.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"http://HOST1.test:80/a/./b/../c.html?z=1&a=2#f", "/%7euser/x", "../../x?b&a", " \t\\a\\b\n",
		"http://bücher.test/", "https://h.test:443", "http://h.test/%zz", "?", "#", "http://[::1]:80/", "http://h.test/a%2fb"} {
		f.Add("http://host1.test/d1/page1.html", s)
	}
	f.Fuzz(func(t *testing.T, base, ref string) {
		u, err := Normalize(base, ref)
		if err != nil {
			return
		}
		v, err := Normalize("", u)
		if err != nil || v != u {
			t.Fatalf("Normalize(%q, %q) = %q, which normalises to %q (%v)", base, ref, u, v, err)
		}
	})
}

// FuzzRobotsMatch: the matcher never panics and an exact pattern always matches itself.
func FuzzRobotsMatch(f *testing.F) {
	f.Add("/*.bak$", "/data.bak")
	f.Add("/private/", "/private/x")
	f.Add("/a*b*c$", "/aXbYc")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		robotsMatch(pattern, path)
		if !containsAny(pattern, "*$") && !robotsMatch(pattern, pattern+path) {
			t.Fatalf("%q does not match %q", pattern, pattern+path)
		}
	})
}

func containsAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}
