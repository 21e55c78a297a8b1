package frontiertest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestCounter(t *testing.T) {
	reg := prometheus.NewRegistry()
	plain := prometheus.NewCounter(prometheus.CounterOpts{Name: "plain_total"})
	labelled := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "labelled_total"}, []string{"k"})
	reg.MustRegister(plain, labelled)
	plain.Add(3)
	labelled.WithLabelValues("a").Add(2)
	labelled.WithLabelValues("b").Add(5)
	for name, want := range map[string]float64{"plain_total": 3, "labelled_total": 7} {
		if got := Counter(t, reg, name); got != want {
			t.Errorf("Counter(%s) = %v, want %v", name, got, want)
		}
	}
}
