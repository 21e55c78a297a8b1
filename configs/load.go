package configs

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// EnvPrefix starts every environment variable that overrides a key.
const EnvPrefix = "FRONTIER_"

// testEnvPrefix starts the variables the test suites read (FRONTIER_TEST_KAFKA, …); Load ignores them.
const testEnvPrefix = "FRONTIER_TEST_"

// builtin holds this directory's YAML files, compiled into every binary: a program started anywhere (after
// go install, from an empty directory) has the same defaults as one started in the repository, and the files
// in configs/ document them.
//
//go:embed common.yaml spider.yaml strategyworker.yaml dbworker.yaml standalone.yaml
var builtin embed.FS

// Builtin returns the compiled-in copy of the file name (e.g. "standalone.yaml").
func Builtin(name string) ([]byte, error) {
	b, err := builtin.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("configs: no built-in file %s", name)
	}
	return b, nil
}

// Options says where Load reads from.
type Options struct {
	// Role, when set, loads the compiled-in common.yaml and <role>.yaml (of this directory, see Builtin) over
	// DefaultConfig, before Files; "common" loads common.yaml only.
	Role string
	// Files are YAML files merged in order, later files overriding earlier ones; typically
	// configs/common.yaml then configs/<role>.yaml. A missing file is an error.
	Files []string
	// Env is the environment, as os.Environ returns it; nil means no environment overrides.
	Env []string
	// Sets are key=value overrides from the command line (--set), applied last.
	Sets []string
}

// FilesFor returns the files Load reads for role given the role file path: the common.yaml beside it (when it
// exists) and the file itself.
func FilesFor(roleFile string) []string {
	common := filepath.Join(filepath.Dir(roleFile), "common.yaml")
	if filepath.Base(roleFile) == "common.yaml" {
		return []string{roleFile}
	}
	if _, err := os.Stat(common); err == nil {
		return []string{common, roleFile}
	}
	return []string{roleFile}
}

// Load reads the configuration: defaults, then the files, then the environment, then the sets; it rejects
// unknown keys and returns the validated Config.
func Load(opts Options) (*Config, error) {
	keys := knownKeys(reflect.TypeFor[Config]())
	v := viper.New()
	v.SetConfigType("yaml")
	setDefaults(v, "", reflect.ValueOf(defaults()))

	type file struct {
		name string
		data []byte
	}
	var files []file
	if opts.Role != "" {
		names := []string{"common.yaml"}
		if opts.Role != "common" {
			names = append(names, opts.Role+".yaml")
		}
		for _, n := range names {
			data, err := Builtin(n)
			if err != nil {
				return nil, err
			}
			files = append(files, file{"built-in " + n, data})
		}
	}
	for _, f := range opts.Files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("configs: %w", err)
		}
		files = append(files, file{f, data})
	}
	for _, f := range files {
		if err := checkFile(f.name, f.data, keys); err != nil {
			return nil, err
		}
		if err := v.MergeConfig(bytes.NewReader(f.data)); err != nil {
			return nil, fmt.Errorf("configs: %s: %w", filepath.Base(f.name), err)
		}
	}

	var errs []error
	for _, kv := range opts.Env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || strings.HasPrefix(name, testEnvPrefix) {
			continue
		}
		key, ok := keys.byEnv[name]
		if !ok {
			errs = append(errs, fmt.Errorf("configs: environment variable %s names no configuration key", name))
			continue
		}
		v.Set(key, val)
	}
	for _, s := range opts.Sets {
		key, val, ok := strings.Cut(s, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok {
			errs = append(errs, fmt.Errorf("configs: --set %q is not key=value", s))
			continue
		}
		if !keys.known(key) {
			errs = append(errs, fmt.Errorf("configs: --set: unknown key %q", key))
			continue
		}
		v.Set(key, val)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	cfg := defaults()
	if err := v.UnmarshalExact(&cfg); err != nil {
		return nil, fmt.Errorf("configs: %s", decodeMessage(err))
	}
	cfg.FillGlobals()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("configs: invalid configuration:\n%w", err)
	}
	return &cfg, nil
}

// checkFile rejects keys the Config does not have, and values of the wrong type, naming the file.
func checkFile(path string, data []byte, keys keySet) error {
	name := filepath.Base(path)
	fv := viper.New()
	fv.SetConfigType("yaml")
	if err := fv.ReadConfig(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("configs: %s: %w", name, err)
	}
	var unknown []string
	for _, k := range fv.AllKeys() {
		if !keys.known(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("configs: %s: unknown key %s", name, quoteAll(unknown))
	}
	probe := DefaultConfig()
	if err := fv.UnmarshalExact(&probe); err != nil {
		return fmt.Errorf("configs: %s: %s", name, decodeMessage(err))
	}
	return nil
}

// decodeMessage turns mapstructure's "decoding failed due to the following error(s):\n\n'key' reason" into
// one line: "key: reason", several joined by "; ".
func decodeMessage(err error) string {
	msg := err.Error()
	const head = "decoding failed due to the following error(s):"
	rest, ok := strings.CutPrefix(msg, head)
	if !ok {
		return msg
	}
	var parts []string
	for _, line := range strings.Split(rest, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "* "))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "'") {
			if i := strings.Index(line[1:], "'"); i >= 0 {
				line = line[1:i+1] + ": " + strings.TrimSpace(line[i+2:])
			}
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// keySet is every key a Config has: leaves (scalars, lists, durations) and open maps, whose sub-keys are free.
type keySet struct {
	leaves map[string]bool
	maps   []string // keys of map-typed fields: "strategy.options" admits "strategy.options.anything"
	byEnv  map[string]string
}

func (k keySet) known(key string) bool {
	if k.leaves[key] {
		return true
	}
	return slices.ContainsFunc(k.maps, func(m string) bool { return key == m || strings.HasPrefix(key, m+".") })
}

var durationType = reflect.TypeFor[time.Duration]()

// fieldKey is the configuration key of struct field f under prefix (the key of its struct, "" at the top):
// its mapstructure name, dotted after prefix; false for a field without one (or tagged "-").
func fieldKey(f reflect.StructField, prefix string) (string, bool) {
	tag := strings.Split(f.Tag.Get("mapstructure"), ",")[0]
	if tag == "" || tag == "-" {
		return "", false
	}
	if prefix == "" {
		return tag, true
	}
	return prefix + "." + tag, true
}

func knownKeys(t reflect.Type) keySet {
	ks := keySet{leaves: map[string]bool{}, byEnv: map[string]string{}}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			key, ok := fieldKey(f, prefix)
			if !ok {
				continue
			}
			switch {
			case f.Type.Kind() == reflect.Struct && f.Type != durationType:
				walk(f.Type, key)
			case f.Type.Kind() == reflect.Map:
				ks.maps = append(ks.maps, key)
			default:
				ks.leaves[key] = true
				ks.byEnv[EnvPrefix+strings.ToUpper(strings.ReplaceAll(key, ".", "_"))] = key
			}
		}
	}
	walk(t, "")
	return ks
}

// setDefaults registers every leaf of the default Config with viper, so that Unmarshal starts from the
// defaults and Set/env overrides of single leaves merge with them.
func setDefaults(v *viper.Viper, prefix string, rv reflect.Value) {
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		key, ok := fieldKey(f, prefix)
		if !ok {
			continue
		}
		fv := rv.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			setDefaults(v, key, fv)
			continue
		}
		v.SetDefault(key, fv.Interface())
	}
}
