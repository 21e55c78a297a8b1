package spider

import (
	"slices"
	"testing"
)

func TestParseJournal(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		partition int
		after     int64
		offs      []int64
		bad       bool
	}{
		{"header only", "frontier-spider-journal partition=1 after=-1\n", 1, -1, nil, false},
		{"offsets", "frontier-spider-journal partition=0 after=41\n42\n44\n", 0, 41, []int64{42, 44}, false},
		{"torn last line", "frontier-spider-journal partition=0 after=3\n4\n5\n1x", 0, 3, []int64{4, 5}, false},
		{"other partition", "frontier-spider-journal partition=2 after=3\n4\n", 0, 0, nil, true},
		{"no header", "4\n5\n", 0, 0, nil, true},
		{"empty", "", 0, 0, nil, true},
	} {
		after, offs, err := parseJournal([]byte(tc.in), tc.partition)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: parseJournal = %d %v, want an error", tc.name, after, offs)
			}
			continue
		}
		if err != nil || after != tc.after || !slices.Equal(offs, tc.offs) {
			t.Errorf("%s: parseJournal = %d %v %v, want %d %v", tc.name, after, offs, err, tc.after, tc.offs)
		}
	}
}
