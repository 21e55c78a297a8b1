package urlfrontier

import (
	"reflect"
	"testing"
)

func TestSortKeys(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	for _, tc := range []struct {
		name  string
		keys  [][]byte
		order []int
		slot  []int
		uniq  [][]byte
	}{
		{"empty", nil, []int{}, []int{}, [][]byte{}},
		{"all nil", [][]byte{nil, nil}, []int{}, []int{-1, -1}, [][]byte{}},
		{"sorted", [][]byte{b("a"), b("b")}, []int{0, 1}, []int{0, 1}, [][]byte{b("a"), b("b")}},
		{"reversed, a nil, a duplicate", [][]byte{b("c"), nil, b("a"), b("c"), b("b")}, []int{2, 4, 0, 3},
			[]int{2, -1, 0, 2, 1}, [][]byte{b("a"), b("b"), b("c")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order, slot, uniq := sortKeys(tc.keys)
			if !reflect.DeepEqual(order, tc.order) || !reflect.DeepEqual(slot, tc.slot) || !reflect.DeepEqual(uniq, tc.uniq) {
				t.Fatalf("got %v %v %q, want %v %v %q", order, slot, uniq, tc.order, tc.slot, tc.uniq)
			}
		})
	}
}
