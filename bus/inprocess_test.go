package bus

import (
	"maps"
	"strings"
	"testing"
)

func TestCheckLayout(t *testing.T) {
	ok := map[Stream]int{SpiderLog: 1, ScoringLog: 2, SpiderFeed: 3}
	if errs := CheckLayout(ok, RetainedGroups()); len(errs) != 0 {
		t.Fatalf("CheckLayout of a good layout = %v", errs)
	}
	bad := map[Stream]int{SpiderLog: 0, ScoringLog: 1, SpiderFeed: 1, Control: 1}
	groups := map[Stream][]string{"other": {"g"}, SpiderLog: {""}}
	var got []string
	for _, err := range CheckLayout(bad, groups) {
		got = append(got, err.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"partitions of spider-log = 0", `partitions: unknown stream "control"`,
		`groups: unknown stream "other"`, "groups of spider-log: empty group name"} {
		if !strings.Contains(all, want) {
			t.Errorf("CheckLayout errors %q lack %q", all, want)
		}
	}
	if errs := CheckLayout(bad, nil, Control); len(errs) != 1 {
		t.Errorf("CheckLayout with Control allowed = %v, want only the spider log's count", errs)
	}
}

func TestRoute(t *testing.T) {
	msgs := []Message{{Key: []byte("a"), Partition: 1}, {Key: []byte("bb"), Partition: 0}}
	got, err := Route(SpiderFeed, msgs, nil, 2)
	if err != nil || got[0] != 1 || got[1] != 0 {
		t.Errorf("Route without a partitioner = %v, %v; want the messages' own [1 0]", got, err)
	}
	byLen := func(k []byte, n int) int { return len(k) % n }
	if got, err := Route(SpiderFeed, msgs, byLen, 2); err != nil || got[0] != 1 || got[1] != 0 {
		t.Errorf("Route by key length = %v, %v; want [1 0]", got, err)
	}
	if _, err := Route(SpiderFeed, msgs, nil, 1); err == nil || !strings.Contains(err.Error(), "message 0 goes to partition 1") {
		t.Errorf("Route out of range = %v, want an error naming message 0", err)
	}
}

func TestOffsets(t *testing.T) {
	o := Offsets{"a": {0: 5}, "b": {0: 7, 1: 3}}
	if got := o.Next("a", 0, 2); got != 5 {
		t.Errorf("Next(a, 0) = %d, want its commit 5", got)
	}
	if got := o.Next("a", 1, 2); got != 2 {
		t.Errorf("Next(a, 1) = %d, want the start 2 (never committed)", got)
	}
	if got := o.Next("c", 0, 2); got != 2 {
		t.Errorf("Next of an unknown group = %d, want the start 2", got)
	}
	if got := o.Low(0, 1, 9); got != 5 {
		t.Errorf("Low(0) = %d, want the slowest group's 5", got)
	}
	if got := o.Low(1, 2, 9); got != 2 {
		t.Errorf("Low(1) = %d, want the start 2 (a never committed there)", got)
	}
	if got := (Offsets{}).Low(0, 1, 9); got != 9 {
		t.Errorf("Low without groups = %d, want the end 9", got)
	}
	bounds := func(p int) (int64, int64) { return 2, 10 }
	if got, want := o.Lag("b", 2, bounds), map[int]int64{0: 3, 1: 7}; !maps.Equal(got, want) {
		t.Errorf("Lag(b) = %v, want %v", got, want)
	}
}

func TestOwnedCommitOffsets(t *testing.T) {
	msgs := []Message{{Partition: 0, Offset: 4}, {Partition: 2, Offset: 1}, {Partition: 0, Offset: 2}}
	got, err := OwnedCommitOffsets(SpiderLog, msgs, []int{0, 2})
	if want := map[int]int64{0: 5, 2: 2}; err != nil || !maps.Equal(got, want) {
		t.Errorf("OwnedCommitOffsets = %v, %v; want %v", got, err, want)
	}
	if _, err := OwnedCommitOffsets(SpiderLog, msgs, []int{0}); err == nil || !strings.Contains(err.Error(), "partition 2") {
		t.Errorf("OwnedCommitOffsets of a partition not owned = %v, want an error naming it", err)
	}
}
