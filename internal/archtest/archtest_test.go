// Package archtest enforces Frontier's dependency direction (docs/architecture.md, "Package levels"): every
// package has a level, a package imports only packages of lower levels (or its own parent, and the exceptions
// below), only bus/kafkabus and hbase touch network clients, only bus/ imports a partitioner, the core model
// imports nothing but the standard library, the identity layer nothing but the standard library, the model and
// x/net, x/text, and the test helpers are imported only by tests.
//
// A package missing from the level table fails the test: adding a package means deciding where it sits.
package archtest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/frontiercrawl/frontier"

// levels places each package (path relative to the module; "" is the root). A pattern ending in "/*" covers
// the subpackages of a directory.
var levels = map[string]int{
	"":          0,
	"identity":  1,
	"codec":     1,
	"partition": 1,
	"queue":     1, "queue/queuetest": 1,
	"state": 1, "state/statetest": 1,
	"metadata": 1, "metadata/metadatatest": 1,
	"strategy": 1, "strategy/*": 1, "scope": 1,
	"bus": 1, "bus/*": 1,
	"warc": 1, "crawlstatus": 1, "sitemap": 1,
	"hbase": 2, "hbase/*": 2,
	"pebblestore": 2, "control": 2,
	"dbworker": 3, "strategyworker": 3,
	"spider": 3, "spider/*": 3,
	"standalone": 4, "configs": 4,
	"urlfrontier": 4, "urlfrontier/urlfrontierpb": 1, // the URLFrontier gRPC service and its generated API
	"internal/outage":    0,             // backoff and outage tracking: standard library only, usable by every level
	"internal/cputime":   0,             // the process's CPU time for benchmarks: standard library only
	"internal/keyfilter": 0,             // a bounded Bloom filter over byte keys (urlfrontier, pebblestore): standard library only
	"internal/cli":       5, "cmd/*": 7, // the bootstrap, and the mains one above the bootstrap they call,
	"launch": 6, // and between the two every role built from its configuration (importable by mains built outside the module).
	// Test-only helpers: they may import anything below the workers, and only tests may import them.
	"frontiertest": 4, "frontiertest/*": 4,
	"internal/archtest": 6, "e2e": 6, "bench/*": 6,
}

// testOnly packages may be imported only from _test.go files.
var testOnly = []string{"frontiertest", "frontiertest/*"}

// allowedSameLevel lists imports between packages of one level that the design allows: the bus declares each
// stream's partitioner (bus/topology.go); configs composes the standalone section, which standalone.Config
// declares and validates.
var allowedSameLevel = map[[2]string]bool{{"bus", "partition"}: true, {"configs", "standalone"}: true}

// partitionUsers are the only packages whose non-test files may import package partition: the bus owns the
// stream topology, so a role cannot pick a partitioner other than the one declared for a stream (which would
// send a host's events to a worker that does not own it).
var partitionUsers = []string{"bus", "bus/*", "partition"}

// testOnlyExceptions may import a test-only package from non-test code: standalone's --demo serves the
// synthetic web so that the quick start crawls something real without a network.
var testOnlyExceptions = map[[2]string]bool{{"launch", "frontiertest/web"}: true}

// clients are third-party network clients and the packages allowed to import them.
var clients = map[string][]string{
	"github.com/segmentio/kafka-go": {"bus/kafkabus", "bus/bustest"},
	"github.com/twmb/franz-go":      {"bus/kafkabus", "bus/bustest"},
	"github.com/apache/thrift":      {"hbase", "hbase/*"},
	"google.golang.org/grpc":        {"urlfrontier", "urlfrontier/*", "cmd/frontierctl"},
}

// thirdParty lists the packages restricted to the standard library, the module's own packages and the
// listed prefixes: the core model takes nothing from outside, the identity layer only IDNA and Unicode data.
var thirdParty = map[string][]string{
	"":         nil,
	"identity": {"golang.org/x/net/", "golang.org/x/text/"},
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(importPath string) (string, bool) {
	if importPath == module {
		return "", true
	}
	r, ok := strings.CutPrefix(importPath, module+"/")
	return r, ok
}

func match(patterns map[string]int, p string) (int, bool) {
	if l, ok := patterns[p]; ok {
		return l, true
	}
	for dir := path.Dir(p); dir != "." && dir != ""; dir = path.Dir(dir) {
		if l, ok := patterns[dir+"/*"]; ok {
			return l, true
		}
	}
	return 0, false
}

func matchAny(list []string, p string) bool {
	m := map[string]int{}
	for _, x := range list {
		m[x] = 0
	}
	_, ok := match(m, p)
	return ok
}

// related reports whether a and b are the same package tree (one is the other's parent or sibling under the
// same parent directory listed with "/*"), which the design lets import each other downward.
func parentOf(parent, child string) bool {
	return parent == "" && child != "" || strings.HasPrefix(child, parent+"/")
}

func TestDependencyDirection(t *testing.T) {
	for _, v := range violations(listPackages(t)) {
		t.Error(v)
	}
}

// TestViolationsAreFound proves the checker can fail: each synthetic package breaks one rule.
func TestViolationsAreFound(t *testing.T) {
	for _, tc := range []struct {
		p    pkg
		want string
	}{
		{pkg{ImportPath: module + "/codec", Imports: []string{module + "/hbase"}}, "lower levels never import higher ones"},
		{pkg{ImportPath: module + "/codec", Imports: []string{module + "/partition"}}, "do not import each other"},
		{pkg{ImportPath: module + "/spider", Imports: []string{"github.com/segmentio/kafka-go"}}, "network client"},
		{pkg{ImportPath: module, Imports: []string{"github.com/vmihailenco/msgpack/v5"}}, "may import only the standard library"},
		{pkg{ImportPath: module, Imports: []string{"golang.org/x/net/idna"}}, "may import only the standard library"},
		{pkg{ImportPath: module + "/identity", Imports: []string{"github.com/vmihailenco/msgpack/v5"}}, "may import only the standard library"},
		{pkg{ImportPath: module + "/configs", Imports: []string{module + "/frontiertest/web"}}, "test-only package"},
		{pkg{ImportPath: module + "/dbworker", Imports: []string{module + "/partition"}}, "the bus owns the topology"},
		{pkg{ImportPath: module + "/cmd/spider", Imports: []string{module + "/partition"}}, "the bus owns the topology"},
		{pkg{ImportPath: module + "/newthing"}, "has no level"},
	} {
		got := strings.Join(violations([]pkg{tc.p}), "\n")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s importing %v: violations %q, want one containing %q", tc.p.ImportPath, tc.p.Imports, got, tc.want)
		}
	}
	for _, ok := range []pkg{
		{ImportPath: module + "/hbase", Imports: []string{module + "/queue", module, "github.com/apache/thrift/lib/go/thrift"},
			TestImports: []string{module + "/frontiertest/web"}},
		{ImportPath: module + "/bus", Imports: []string{module + "/partition"}},
		{ImportPath: module + "/spider", TestImports: []string{module + "/partition"}, XTestImports: []string{module + "/partition"}},
	} {
		if v := violations([]pkg{ok}); len(v) > 0 {
			t.Errorf("allowed imports reported: %v", v)
		}
	}
}

// violations returns one message for every rule the packages break.
func violations(pkgs []pkg) []string {
	var out []string
	errorf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		lf, ok := match(levels, from)
		if !ok {
			errorf("package %q has no level: add it to the table in internal/archtest", from)
			continue
		}
		check := func(imports []string, inTest bool) {
			for _, imp := range imports {
				if to, ours := rel(imp); ours {
					lt, ok := match(levels, to)
					if !ok {
						continue // reported when that package is visited
					}
					if !inTest && matchAny(testOnly, to) && !matchAny(testOnly, from) && !testOnlyExceptions[[2]string{from, to}] {
						errorf("%s imports the test-only package %s outside a _test.go file", name(from), name(to))
					}
					if inTest {
						continue // tests may wire any packages together
					}
					if to == "partition" && !matchAny(partitionUsers, from) {
						errorf("%s imports partition: the bus owns the topology (bus/topology.go); open producers with bus.OpenProducer and compute partitions with bus.Partition", name(from))
					}
					switch {
					case lt > lf:
						errorf("%s (level %d) imports %s (level %d): lower levels never import higher ones", name(from), lf, name(to), lt)
					case lt == lf && !parentOf(to, from) && !allowedSameLevel[[2]string{from, to}] && !sameTree(from, to):
						errorf("%s imports %s: packages of one level (%d) do not import each other", name(from), name(to), lf)
					}
					continue
				}
				if inTest {
					continue
				}
				for client, allowed := range clients {
					if (imp == client || strings.HasPrefix(imp, client+"/")) && !matchAny(allowed, from) {
						errorf("%s imports the network client %s; only %v may", name(from), imp, allowed)
					}
				}
				if allowed, ok := thirdParty[from]; ok && strings.Contains(strings.Split(imp, "/")[0], ".") &&
					!strings.HasPrefix(imp, module) && !hasAnyPrefix(imp, allowed) {
					errorf("%s imports %s; it may import only the standard library, the module and %v", name(from), imp, allowed)
				}
			}
		}
		check(p.Imports, false)
		check(append(p.TestImports, p.XTestImports...), true)
	}
	return out
}

// sameTree reports whether from and to share a top directory whose subpackages may use each other
// (strategy/<name> → strategy/…, bus/bustest → bus/membus, spider/x → spider/y, hbase/x → hbase/y).
func sameTree(from, to string) bool {
	top := func(s string) string { return strings.Split(s, "/")[0] }
	return from != "" && to != "" && top(from) == top(to)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func name(rel string) string {
	if rel == "" {
		return fmt.Sprintf("%q (root)", module)
	}
	return rel
}
