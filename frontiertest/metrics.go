package frontiertest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Counter returns the sum over its label sets of the counter called name in g, and fails the test if g has
// no metric of that name.
func Counter(t testing.TB, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		sum := 0.0
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
		return sum
	}
	t.Fatalf("%s is not registered", name)
	return 0
}
