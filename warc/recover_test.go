package warc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writtenFile returns the bytes of a finished file holding warcinfo and n exchanges (3 records each).
func writtenFile(t testing.TB, n int) []byte {
	t.Helper()
	cfg := testConfig(t)
	w := newWriter(t, cfg)
	for i := range n {
		if _, err := w.WriteExchange(exchange(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.Files()[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// memberEnds returns the end offsets of the gzip members (records) of a file the Writer wrote.
func memberEnds(t *testing.T, b []byte) []int64 {
	t.Helper()
	r := NewReader(bytes.NewReader(b))
	var ends []int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return append(ends, int64(len(b)))
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Offset > 0 {
			ends = append(ends, rec.Offset) // the start of a member is the end of the one before
		}
	}
}

func TestRecoverFile(t *testing.T) {
	whole := writtenFile(t, 3) // warcinfo + 9 records
	ends := memberEnds(t, whole)
	if len(ends) != 10 {
		t.Fatalf("%d members, want 10", len(ends))
	}
	for _, tc := range []struct {
		name        string
		data        []byte
		wantRecords int
		wantCut     int64
	}{
		{"clean", whole, 10, 0},
		{"torn last member", whole[:len(whole)-7], 9, ends[9] - ends[8] - 7},
		{"torn in the header of the last member", whole[:ends[8]+5], 9, 5},
		// The last exchange's request is whole, its response torn: the request goes too, or its
		// WARC-Concurrent-To would name a response the file lacks.
		{"torn response after a whole request", whole[:ends[8]-3], 7, ends[8] - 3 - ends[6]},
		{"garbage after whole records", append(bytes.Clone(whole[:ends[3]]), "\x1f\x8bgarbage"...), 4, 9},
		{"empty", nil, 0, 0},
		{"torn warcinfo", whole[:ends[0]-1], 0, ends[0] - 1},
		{"not gzip", []byte("WARC/1.1\r\n"), 0, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			final := filepath.Join(dir, "frontier-20260101000000000-00000-spider-0.warc.gz")
			if err := os.WriteFile(final+OpenSuffix, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			rec, err := RecoverFile(final + OpenSuffix)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Records != tc.wantRecords || rec.Cut != tc.wantCut {
				t.Errorf("recovered %d records, cut %d bytes; want %d, %d", rec.Records, rec.Cut, tc.wantRecords, tc.wantCut)
			}
			if _, err := os.Stat(final + OpenSuffix); err == nil {
				t.Error("the .open file is still there")
			}
			if tc.wantRecords == 0 {
				if rec.File != "" {
					t.Errorf("a file without a whole record was kept as %s", rec.File)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
					t.Errorf("files left: %v", left)
				}
				return
			}
			if rec.File != final {
				t.Fatalf("finished as %q, want %q", rec.File, final)
			}
			got := readDir(t, dir)[final]
			if len(got) != tc.wantRecords {
				t.Fatalf("the finished file reads as %d records, want %d", len(got), tc.wantRecords)
			}
			if got[0].Type() != TypeWarcinfo {
				t.Errorf("first record is %s", got[0].Type())
			}
		})
	}
	if _, err := RecoverFile(filepath.Join(t.TempDir(), "x.warc.gz")); err == nil {
		t.Error("RecoverFile of a finished file: no error")
	}
}

// New finishes the files a killed writer of its prefix and host name left open, and leaves alone those of
// other host names and those a live writer holds.
func TestNewRecoversOpenFiles(t *testing.T) {
	whole := writtenFile(t, 2)
	cfg := testConfig(t)
	dead := filepath.Join(cfg.Dir, "frontier-20260101000000000-00000-spider-0.warc.gz")
	other := filepath.Join(cfg.Dir, "frontier-20260101000000000-00000-spider-1.warc.gz")
	for _, f := range []string{dead, other} {
		if err := os.WriteFile(f+OpenSuffix, whole[:len(whole)-3], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live := newWriter(t, cfg) // recovers dead, leaves other (another host name)
	if _, err := live.WriteExchange(exchange(7)); err != nil {
		t.Fatal(err)
	}
	if err := live.Flush(); err != nil {
		t.Fatal(err)
	}
	if st := live.Stats(); st.Recovered != 1 {
		t.Errorf("Stats.Recovered = %d, want 1", st.Recovered)
	}
	second := newWriter(t, cfg) // the live writer's file is locked: not recovered
	open, _ := filepath.Glob(filepath.Join(cfg.Dir, "*"+OpenSuffix))
	if len(open) != 2 {
		t.Errorf("open files after a second New: %v, want the live writer's and spider-1's", open)
	}
	if err := errors.Join(second.Close(), live.Close()); err != nil {
		t.Fatal(err)
	}
	recs := readDir(t, cfg.Dir)
	if n := len(recs[dead]); n != 6 {
		t.Errorf("recovered file holds %d records, want 6 (warcinfo and the whole records before the torn one)", n)
	}
	if len(recs) != 2 {
		t.Errorf("finished files: %d, want 2 (recovered, live)", len(recs))
	}
	if _, err := os.Stat(other + OpenSuffix); err != nil || strings.Contains(other, "spider-0") {
		t.Errorf("another host's open file was touched: %v", err)
	}
}
