package kafkabus

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	kafka "github.com/segmentio/kafka-go"
)

func TestAssignOwners(t *testing.T) {
	member := func(id string, want, own []int) kafka.GroupMember {
		b, _ := json.Marshal(memberData{Want: want, Own: own})
		return kafka.GroupMember{ID: id, UserData: b}
	}
	parts := func(n int) []kafka.Partition {
		var ps []kafka.Partition
		for i := range n {
			ps = append(ps, kafka.Partition{Topic: "t", ID: i})
		}
		return ps
	}
	for _, tc := range []struct {
		name    string
		members []kafka.GroupMember
		n       int
		want    map[string][]int
	}{
		{"one sharer takes all", []kafka.GroupMember{member("a", nil, nil)}, 4, map[string][]int{"a": {0, 1, 2, 3}}},
		{"two sharers start at once: disjoint halves", []kafka.GroupMember{member("b", nil, nil), member("a", nil, nil)}, 4,
			map[string][]int{"a": {0, 2}, "b": {1, 3}}},
		{"a newcomer takes a share; the owner keeps the rest", []kafka.GroupMember{member("a", nil, []int{0, 1, 2, 3}), member("b", nil, nil)}, 4,
			map[string][]int{"a": {0, 1}, "b": {2, 3}}},
		{"survivor takes the dead one's share", []kafka.GroupMember{member("b", nil, []int{2, 3})}, 4, map[string][]int{"b": {0, 1, 2, 3}}},
		{"more sharers than partitions: a standby", []kafka.GroupMember{member("a", nil, nil), member("b", nil, nil), member("c", nil, nil)}, 2,
			map[string][]int{"a": {0}, "b": {1}, "c": nil}},
		{"same explicit partition: first by id owns, second waits", []kafka.GroupMember{member("b", []int{1}, nil), member("a", []int{1}, nil)}, 2,
			map[string][]int{"a": {1}, "b": nil}},
		{"same explicit partition: the owner keeps it against an earlier id", []kafka.GroupMember{member("b", []int{1}, []int{1}), member("a", []int{1}, nil)}, 2,
			map[string][]int{"a": nil, "b": {1}}},
		{"explicit partitions of different processes", []kafka.GroupMember{member("a", []int{0, 2}, nil), member("b", []int{1}, nil)}, 4,
			map[string][]int{"a": {0, 2}, "b": {1}}},
		{"members of another topic get nothing of this one", []kafka.GroupMember{member("a", nil, nil), {ID: "b", Topics: []string{"other"}}}, 2,
			map[string][]int{"a": {0, 1}, "b": nil}},
		{"unreadable user data shares", []kafka.GroupMember{{ID: "a", UserData: []byte("?")}}, 2, map[string][]int{"a": {0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := assignOwners(tc.members, parts(tc.n))
			seen := map[int]string{}
			for id, topics := range got {
				for _, p := range topics["t"] {
					if other, dup := seen[p]; dup {
						t.Fatalf("partition %d given to %s and %s", p, other, id)
					}
					seen[p] = id
				}
				if !slices.Equal(topics["t"], tc.want[id]) {
					t.Errorf("%s got %v, want %v", id, topics["t"], tc.want[id])
				}
			}
			if len(got) != len(tc.members) {
				t.Errorf("assignments for %d members, want %d: %v", len(got), len(tc.members), fmt.Sprint(got))
			}
		})
	}
}
