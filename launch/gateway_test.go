package launch

import (
	"slices"
	"testing"
)

func TestSplitAddr(t *testing.T) {
	for _, tc := range []struct {
		args []string
		addr string
		rest []string
		err  bool
	}{
		{nil, defaultGatewayAddr, nil, false},
		{[]string{"--addr", ":9000", "--partition-id", "1"}, ":9000", []string{"--partition-id", "1"}, false},
		{[]string{"--config", "c.yaml", "-addr=10.0.0.1:7071"}, "10.0.0.1:7071", []string{"--config", "c.yaml"}, false},
		{[]string{"--set", "addr=x"}, defaultGatewayAddr, []string{"--set", "addr=x"}, false},
		{[]string{"--addr"}, "", nil, true},
	} {
		addr, rest, err := splitAddr(tc.args)
		if (err != nil) != tc.err || addr != tc.addr || !slices.Equal(rest, tc.rest) {
			t.Errorf("splitAddr(%q) = %q, %q, %v; want %q, %q, error %v", tc.args, addr, rest, err, tc.addr, tc.rest, tc.err)
		}
	}
}
