package bus

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestCheckPartitions(t *testing.T) {
	tests := []struct {
		parts []int
		n     int
		err   string
	}{
		{[]int{0}, 1, ""},
		{[]int{2, 0, 1}, 3, ""},
		{nil, 3, "no partitions"},
		{[]int{3}, 3, "partition 3 out of range [0, 3)"},
		{[]int{-1}, 3, "partition -1 out of range"},
		{[]int{1, 1}, 3, "partition 1 listed twice"},
	}
	for _, tc := range tests {
		err := CheckPartitions(SpiderFeed, tc.parts, tc.n)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("CheckPartitions(%v, %d) = %v, want nil", tc.parts, tc.n, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "spider-feed")):
			t.Errorf("CheckPartitions(%v, %d) = %v, want an error naming spider-feed and %q", tc.parts, tc.n, err, tc.err)
		}
	}
}

func TestCommitOffsets(t *testing.T) {
	got := CommitOffsets([]Message{{Partition: 0, Offset: 4}, {Partition: 1, Offset: 9}, {Partition: 0, Offset: 2}, {Partition: 0, Offset: 7}})
	if want := map[int]int64{0: 8, 1: 10}; !maps.Equal(got, want) {
		t.Fatalf("CommitOffsets = %v, want %v", got, want)
	}
	if got := CommitOffsets(nil); len(got) != 0 {
		t.Fatalf("CommitOffsets(nil) = %v", got)
	}
}

type reporting struct {
	Consumer
	bad []int64
}

func (r *reporting) Malformed(m Message, _ error) { r.bad = append(r.bad, m.Offset) }

func TestDecode(t *testing.T) {
	msgs := []Message{{Value: []byte("a"), Offset: 1}, {Value: nil, Offset: 2}, {Value: []byte("c"), Offset: 3}, {Value: []byte{}, Offset: 4}}
	dec := func(m Message) (string, error) {
		if len(m.Value) == 0 {
			return "", errors.New("empty")
		}
		return string(m.Value), nil
	}
	r := &reporting{}
	got := Decode(r, msgs, dec)
	if strings.Join(got, ",") != "a,c" {
		t.Errorf("Decode = %v, want [a c]", got)
	}
	if len(r.bad) != 2 || r.bad[0] != 2 || r.bad[1] != 4 {
		t.Errorf("reported %v, want offsets [2 4]", r.bad)
	}
	// A consumer without a reporter: still skipped, nothing panics.
	if got := Decode[string](nil, msgs, dec); len(got) != 2 {
		t.Errorf("Decode with no reporter = %v", got)
	}
}
