package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/viper"
)

// The monitoring files in deploy/monitoring: a Grafana dashboard and Prometheus alert rules. Every query is
// checked here for balanced brackets and, in the integration test, for metric names that running workers
// really export (TestOperateClusterCrawl scrapes them).
const (
	dashboardFile = "../../deploy/monitoring/frontier-dashboard.json"
	alertsFile    = "../../deploy/monitoring/frontier-alerts.yml"
)

// monitoringExprs returns every PromQL expression of the dashboard and the alert rules, named for messages.
func monitoringExprs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			out[fmt.Sprintf("panel %q target %d", p.Title, i)] = tg.Expr
		}
	}
	f, err := os.Open(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(f); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr, For string
			}
		}
	}
	if err := v.Unmarshal(&rules); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.For == "" {
				t.Errorf("%s: a rule without alert name or for: %+v", alertsFile, r)
			}
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

var metricName = regexp.MustCompile(`\bfrontier_[a-z0-9_]+\b`)

// exprMetrics returns the metric names an expression uses (histogram series named by their family).
func exprMetrics(expr string) []string {
	var out []string
	for _, m := range metricName.FindAllString(expr, -1) {
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if strings.HasSuffix(m, "_seconds"+suf) {
				m = strings.TrimSuffix(m, suf)
			}
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// balanced reports whether (), [] and {} nest properly outside string literals.
func balanced(expr string) bool {
	var stack []rune
	pair := map[rune]rune{')': '(', ']': '[', '}': '{'}
	inStr := rune(0)
	for _, r := range expr {
		switch {
		case inStr != 0:
			if r == inStr {
				inStr = 0
			}
		case r == '"' || r == '\'':
			inStr = r
		case r == '(' || r == '[' || r == '{':
			stack = append(stack, r)
		case pair[r] != 0:
			if len(stack) == 0 || stack[len(stack)-1] != pair[r] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0 && inStr == 0
}

func TestMonitoringFilesParse(t *testing.T) {
	exprs := monitoringExprs(t)
	if len(exprs) < 10 {
		t.Fatalf("%d expressions, want the dashboard's panels and the alert rules", len(exprs))
	}
	for name, e := range exprs {
		if !balanced(e) {
			t.Errorf("%s: unbalanced brackets in %q", name, e)
		}
		if len(exprMetrics(e)) == 0 {
			t.Errorf("%s: %q uses no frontier_ metric", name, e)
		}
	}
}

// checkMonitoring fails for every metric a dashboard panel or alert uses that neither appears in scraped (a
// real /metrics page) nor is described by a collector the workers registered (a labelled metric that has
// not been observed yet is absent from a scrape).
func checkMonitoring(t *testing.T, scraped string, described map[string]bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, line := range strings.Split(scraped, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line+" ", "{ ")]
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			name = strings.TrimSuffix(name, suf)
		}
		seen[name] = true
	}
	var describedOnly []string
	for where, e := range monitoringExprs(t) {
		for _, m := range exprMetrics(e) {
			switch {
			case seen[m]:
			case described[m]:
				describedOnly = append(describedOnly, m)
			default:
				t.Errorf("%s uses %s, which no running worker exports", where, m)
			}
		}
	}
	slices.Sort(describedOnly)
	t.Logf("%d metric names in the scrape; registered but not yet observed: %v", len(seen), slices.Compact(describedOnly))
}

// recorder is a Registerer that remembers the names of the metrics registered through it.
type recorder struct {
	prometheus.Registerer
	names map[string]bool
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
		}
	}
	return r.Registerer.Register(c)
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}
