package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink matches the target of a Markdown link: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: the README and docs/ link only to files inside the repository (no web addresses), and every
// such file exists, so a clean clone has all the documentation it points to.
func TestDocLinks(t *testing.T) {
	root := "../.."
	files := []string{"README.md"}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, d := range docs {
		files = append(files, strings.TrimPrefix(d, root+"/"))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.HasPrefix(target, "#") {
				continue
			}
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s links to %s, outside the repository", f, target)
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			path := filepath.Clean(filepath.Join(root, filepath.Dir(f), target))
			rel, err := filepath.Rel(root, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links to %s, outside the repository", f, m[1])
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
		}
	}
}

// outside matches citations of documents that do not ship with the repository: the design and style notes and
// the specifications the project was built from. Code and docs say the fact, or cite a file of the repository.
var outside = regexp.MustCompile(`\b(` + "DESIGN" + `|` + "STYLE" + `)\.md\b|[\w.-]+-` + `spec\.md\b|\bshared/reference\b|\.\./shared/`)

// TestNoCitationsOutsideRepo: no source, configuration or document of the repository cites a file that a clean
// clone does not have.
func TestNoCitationsOutsideRepo(t *testing.T) {
	root := "../.."
	exts := map[string]bool{".go": true, ".md": true, ".yaml": true, ".yml": true, ".sh": true, ".py": true, ".txt": true, ".proto": true, ".thrift": true}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(path)] && filepath.Base(path) != "Makefile" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d cites %s, which is not in the repository: state the fact or cite a file of the repository", rel, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOutsideCitationsAreFound proves the check can fail.
func TestOutsideCitationsAreFound(t *testing.T) {
	for _, line := range []string{
		"// Package x does y (" + "DESIGN" + ".md §1).",
		"// as " + "STYLE" + ".md C3 says",
		"// vectors from frontera-0.8-" + "spec.md §2",
		"see ../" + "shared/" + "reference/libraries.md",
	} {
		if outside.FindString(line) == "" {
			t.Errorf("%q not reported", line)
		}
	}
	for _, line := range []string{"// see docs/architecture.md, invariant 2", "// RFC 9309 §2.3.1", "TopicSpec"} {
		if m := outside.FindString(line); m != "" {
			t.Errorf("%q reported (%q)", line, m)
		}
	}
}
