package configs

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"
)

// commentedKeys are keys the shipped files document in comments (examples to uncomment), not as YAML.
var commentedKeys = []string{"scope.deny_extensions", "db_worker.partitions", "strategy_worker.strategy", "strategy_worker.options"}

// alternatives are valid values other than the default for the keys whose type alone does not give one. A value
// equal to the default (streams.control.partitions can only be 1) is only checked to be accepted.
var alternatives = map[string]string{
	"log.level":                  "debug",
	"log.format":                 "json",
	"codec":                      "json",
	"identity.canonicalization":  "w3lib-1.22",
	"identity.fingerprint":       "md5",
	"metrics.addr":               "127.0.0.1:9399",
	"kafka.brokers":              "127.0.0.1:9093,127.0.0.1:9094",
	"hbase.addr":                 "127.0.0.1:9091",
	"hbase.namespace":            "ns",
	"hbase.table_prefix":         "other_",
	"scope.follow":               "hosts",
	"scope.include":              `^https://a\.example/`,
	"scope.exclude":              `\.pdf$`,
	"scope.schemes":              "https",
	"scope.deny_extensions":      "pdf,zip",
	"strategy_worker.strategy":   "dfs",
	"db_worker.partitions":       "0,1",
	"standalone.data_dir":        "other/standalone",
	"streams.control.partitions": "1",
	"streams.control.retention":  "0s",
	"hbase.retries":              "3",
}

// documentedKeys returns every key the shipped configuration files set or show in a comment.
func documentedKeys(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configuration files: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v := viper.New()
		v.SetConfigType("yaml")
		if err := v.ReadConfig(strings.NewReader(string(data))); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, k := range v.AllKeys() {
			seen[k] = true
		}
	}
	for _, k := range commentedKeys {
		seen[k] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// field returns the field of c that key names.
func field(c *Config, key string) (reflect.Value, bool) {
	v := reflect.ValueOf(c).Elem()
	for _, part := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		found := false
		for i := range v.NumField() {
			if strings.Split(v.Type().Field(i).Tag.Get("mapstructure"), ",")[0] == part {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// alternative returns a valid value for key other than its default d, as a string for env and --set.
func alternative(t *testing.T, key string, d reflect.Value) string {
	t.Helper()
	if s, ok := alternatives[key]; ok {
		return s
	}
	switch {
	case d.Type() == reflect.TypeFor[time.Duration]():
		return (time.Duration(d.Int()) + 90*time.Second).String()
	case d.Kind() == reflect.Bool:
		return fmt.Sprint(!d.Bool())
	case d.CanInt():
		return fmt.Sprint(d.Int() + 1)
	case d.CanFloat():
		return fmt.Sprint(d.Float() + 0.25)
	case d.Kind() == reflect.String && strings.HasSuffix(key, ".topic"):
		return d.String() + "-other"
	}
	t.Fatalf("%s: no alternative value for a %s; add one to alternatives", key, d.Type())
	return ""
}

// yamlOf renders key: value as nested YAML; a list value (commas) as a flow sequence of quoted strings.
func yamlOf(key, value string, list bool) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts[:len(parts)-1] {
		fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", i), p)
	}
	v := fmt.Sprintf("%q", value)
	if list {
		var q []string
		for _, e := range strings.Split(value, ",") {
			q = append(q, fmt.Sprintf("%q", e))
		}
		v = "[" + strings.Join(q, ", ") + "]"
	}
	fmt.Fprintf(&b, "%s%s: %s\n", strings.Repeat("  ", len(parts)-1), parts[len(parts)-1], v)
	return b.String()
}

// TestEveryDocumentedKeySettable walks every key that configs/*.yaml documents and sets it, to a value other
// than its default, from a YAML file, from its FRONTIER_* variable and with --set: the three must load the
// same value, and it must differ from the default. A map key (strategy_worker.options) takes sub-keys, which
// YAML and --set can name; an environment variable cannot (its underscores are ambiguous).
func TestEveryDocumentedKeySettable(t *testing.T) {
	base, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := documentedKeys(t)
	if len(keys) < 40 {
		t.Fatalf("only %d documented keys found: %v", len(keys), keys)
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			d, ok := field(base, key)
			if !ok {
				t.Fatalf("documented key %s is not a field of Config", key)
			}
			if d.Kind() == reflect.Map {
				sub := key + ".max_pages"
				for name, opts := range map[string]Options{
					"yaml":  {Files: []string{writeTemp(t, yamlOf(sub, "5", false))}},
					"--set": {Sets: []string{sub + "=5"}},
				} {
					cfg, err := Load(opts)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if got, _ := field(cfg, key); fmt.Sprint(got.MapIndex(reflect.ValueOf("max_pages"))) != "5" {
						t.Errorf("%s: %s = %v, want max_pages 5", name, key, got)
					}
				}
				return
			}
			alt := alternative(t, key, d)
			list := d.Kind() == reflect.Slice
			env := EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
			got := map[string]any{}
			for name, opts := range map[string]Options{
				"yaml":  {Files: []string{writeTemp(t, yamlOf(key, alt, list))}},
				"env":   {Env: []string{env + "=" + alt}},
				"--set": {Sets: []string{key + "=" + alt}},
			} {
				cfg, err := Load(opts)
				if err != nil {
					t.Fatalf("%s = %s from %s: %v", key, alt, name, err)
				}
				v, _ := field(cfg, key)
				got[name] = v.Interface()
			}
			if !reflect.DeepEqual(got["yaml"], got["env"]) || !reflect.DeepEqual(got["yaml"], got["--set"]) {
				t.Errorf("%s = %s: yaml gives %#v, env %#v, --set %#v", key, alt, got["yaml"], got["env"], got["--set"])
			}
			if _, same := alternatives[key]; reflect.DeepEqual(got["yaml"], d.Interface()) && !(same && fmt.Sprint(d.Interface()) == alt) &&
				!slices.Contains([]string{"streams.control.partitions", "streams.control.retention"}, key) {
				t.Errorf("%s = %s loaded as the default %#v", key, alt, d.Interface())
			}
		})
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
