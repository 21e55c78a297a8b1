package frontiertest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Counter returns the sum over its label sets of the counter called name in g, and fails the test if g has
// no metric of that name.
func Counter(t testing.TB, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	return sum(t, g, name, func(m *dto.Metric) float64 { return m.GetCounter().GetValue() })
}

// Gauge returns the sum over its label sets of the gauge called name in g, and fails the test if g has no
// metric of that name.
func Gauge(t testing.TB, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	return sum(t, g, name, func(m *dto.Metric) float64 { return m.GetGauge().GetValue() })
}

func sum(t testing.TB, g prometheus.Gatherer, name string, value func(*dto.Metric) float64) float64 {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		total := 0.0
		for _, m := range f.GetMetric() {
			total += value(m)
		}
		return total
	}
	t.Fatalf("%s is not registered", name)
	return 0
}
