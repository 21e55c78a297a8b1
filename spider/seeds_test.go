package spider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frontiercrawl/frontier"
)

func TestParseSeedScore(t *testing.T) {
	for _, tc := range []struct {
		line  string
		url   string
		score string // "" = none
		err   string // substring of the error
	}{
		{"http://a.com/ 0.75", "http://a.com/", "0.75", ""},
		{"http://a.com/\t1   # the best", "http://a.com/", "1", ""},
		{"http://a.com/ 0", "http://a.com/", "0", ""},
		{"http://a.com/ #0.5 is a comment", "http://a.com/", "", ""},
		{"http://a.com/ 1.5", "", "", `score 1.5 is outside [0, 1]`},
		{"http://a.com/ -0.1", "", "", "outside [0, 1]"},
		{"http://a.com/ NaN", "", "", "outside [0, 1]"},
		{"http://a.com/ high", "", "", `the second is not a score`},
		{"http://a.com/ 0.5 0.6", "", "", "more than one word after the URL and its score"},
		{"a.com 0.5", "", "", "not an absolute URL"},
	} {
		s, err := ParseSeed(tc.line)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSeed(%q) error = %v, want one containing %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSeed(%q): %v", tc.line, err)
			continue
		}
		score := ""
		if s.HasScore {
			score = fmt.Sprint(s.Score)
		}
		if s.URL.String() != tc.url || score != tc.score {
			t.Errorf("ParseSeed(%q) = %s %q, want %s %q", tc.line, s.URL, score, tc.url, tc.score)
		}
	}
}

// TestSeedFileErrorsNameTheLine: a bad score is reported with its line number and the other lines go on.
func TestSeedFileErrorsNameTheLine(t *testing.T) {
	var got []string
	var errs []string
	err := ReadSeedFile(strings.NewReader("# scores\nhttp://a/ 0.9\nhttp://b/ 9\nhttp://c/\n"),
		func(line int, s Seed) error {
			got = append(got, fmt.Sprintf("%d:%s:%v", line, s.URL, s.Score))
			return nil
		},
		func(e *SeedError) { errs = append(errs, e.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[2:http://a/:0.9 4:http://c/:0]" {
		t.Errorf("seeds %v", got)
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "line 3: ") || !strings.Contains(errs[0], `score 9 is outside [0, 1]`) {
		t.Errorf("errors %q, want one naming line 3 and its score", errs)
	}
}

func FuzzParseSeed(f *testing.F) {
	f.Add("http://example.com/a 0.5 # c")
	f.Add("https://x.test/ 1e-3")
	f.Add("http://a/ NaN")
	f.Add("http://a/ 0x1p-2")
	f.Fuzz(func(t *testing.T, line string) {
		s, err := ParseSeed(line)
		if err != nil {
			var se *SeedError
			if !errors.As(err, &se) {
				t.Fatalf("ParseSeed(%q) error %T is not a *SeedError", line, err)
			}
			return
		}
		if s.URL == nil {
			if s.HasScore {
				t.Fatalf("ParseSeed(%q): a score without a URL", line)
			}
			return
		}
		if s.HasScore && !(s.Score >= 0 && s.Score <= 1) {
			t.Fatalf("ParseSeed(%q) = score %v outside [0, 1]", line, s.Score)
		}
	})
}

// TestInjectSeedScores: a seed's score column travels in its meta score; a seed without one has none.
func TestInjectSeedScores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(path, []byte("http://a.test/ 0.25\nhttp://b.test/\nhttp://c.test/ 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, nil, nil)
	h.deps.Feed = h.feed.consumer()
	s, err := New(testConfig(t), h.deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InjectSeeds(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range h.log.records() {
		for _, seed := range r.msg.(*frontier.AddSeeds).Seeds {
			sc, err := seed.MetaScore()
			got[seed.URL] = fmt.Sprint(sc, err == nil)
		}
	}
	if want := map[string]string{"http://a.test/": "0.25 true", "http://b.test/": "0 false"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("seed scores %v, want %v (the line with a bad score skipped)", got, want)
	}
}
