package spider

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/identity"
	"github.com/frontiercrawl/frontier/spider/links"
)

// MaxSeedLine is the longest seed-file line accepted, in bytes.
const MaxSeedLine = 64 << 10

// seedsPerMessage bounds the seeds of one add_seeds message.
const seedsPerMessage = 1000

// Seed is one seed of a seed file: its URL and, when the line gives one, its score.
type Seed struct {
	URL *url.URL
	// Score is the seed's priority in [0, 1] from the line's optional second column; HasScore says whether
	// the line had one. The strategy schedules the seed with it (strategy.Common.SeedScores).
	Score    float64
	HasScore bool
}

// ParseSeed parses one line of a seed file: an absolute http(s) URL, optionally followed by a score in
// [0, 1], optionally followed by a '#' comment. It returns a nil URL for a blank line or a comment (a line
// whose first non-space character is '#'). Anything else is a *SeedError naming the problem.
func ParseSeed(line string) (Seed, error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return Seed{}, nil
	}
	fields := strings.Fields(line)
	if i := slices.IndexFunc(fields, func(f string) bool { return strings.HasPrefix(f, "#") }); i >= 0 {
		fields = fields[:i]
	}
	raw := fields[0]
	var seed Seed
	switch len(fields) {
	case 1:
	case 2:
		sc, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return Seed{}, &SeedError{Text: line, Err: errors.New("more than one word, and the second is not a score (a comment must start with #)")}
		}
		if !(sc >= 0 && sc <= 1) {
			return Seed{}, &SeedError{Text: line, Err: fmt.Errorf("score %s is outside [0, 1]", fields[1])}
		}
		seed.Score, seed.HasScore = sc, true
	default:
		return Seed{}, &SeedError{Text: line, Err: errors.New("more than one word after the URL and its score (a comment must start with #)")}
	}
	if !strings.Contains(raw, "://") {
		return Seed{}, &SeedError{Text: raw, Err: errors.New("not an absolute URL (want http:// or https://)")}
	}
	u, err := links.Resolve(nil, raw)
	if err != nil {
		return Seed{}, &SeedError{Text: raw, Err: err}
	}
	seed.URL = u
	return seed, nil
}

// ParseSeedLine is ParseSeed without the score.
func ParseSeedLine(line string) (*url.URL, error) {
	s, err := ParseSeed(line)
	return s.URL, err
}

// SeedError is an invalid line of a seed file: ParseSeedLine returns it with Line 0, ReadSeeds sets Line.
type SeedError struct {
	Line int
	Text string // the line, or its URL
	Err  error  // what is wrong
}

func (e *SeedError) Error() string {
	reason := e.Err.Error()
	var ue *identity.URLError
	if errors.As(e.Err, &ue) {
		reason = ue.Reason()
	}
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %q: %s", e.Line, e.Text, reason)
	}
	return fmt.Sprintf("spider: seed %q: %s", e.Text, reason)
}

func (e *SeedError) Unwrap() error { return e.Err }

// maxSeedErrors is how many invalid lines an error about a seed file quotes.
const maxSeedErrors = 5

// NoSeedsError is a seed file with no valid URL: empty, only comments, or every line invalid.
type NoSeedsError struct {
	Path  string
	Lines int          // lines read
	Bad   []*SeedError // the first invalid lines (at most 5)
	NBad  int          // invalid lines in all
}

func (e *NoSeedsError) Error() string {
	switch {
	case e.Lines == 0:
		return fmt.Sprintf("seeds file %s is empty: want one http(s) URL a line", e.Path)
	case e.NBad == 0:
		return fmt.Sprintf("seeds file %s has no URL in its %d lines (only blank lines and # comments)", e.Path, e.Lines)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seeds file %s has no valid URL: ", e.Path)
	for i, se := range e.Bad {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(se.Error())
	}
	if more := e.NBad - len(e.Bad); more > 0 {
		fmt.Fprintf(&b, "; and %d more invalid lines", more)
	}
	return b.String()
}

// CheckSeeds reads the seed file at path and returns how many valid seed URLs it holds. A file that cannot be
// read is an error naming it; a file without a valid URL is a *NoSeedsError quoting its first invalid lines.
// Programs call it before they start, so that a bad seed file stops them at once.
func CheckSeeds(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("seeds file: %w", err)
	}
	defer f.Close()
	ns := &NoSeedsError{Path: path}
	valid := 0
	err = readSeeds(f, func(int, Seed) error { valid++; return nil }, func(se *SeedError) {
		ns.NBad++
		if len(ns.Bad) < maxSeedErrors {
			ns.Bad = append(ns.Bad, se)
		}
	}, &ns.Lines)
	if err != nil {
		return 0, fmt.Errorf("seeds file %s: %w", path, err)
	}
	if valid == 0 {
		return 0, ns
	}
	return valid, nil
}

// ReadSeeds reads a seed file: one URL a line, blank lines and '#' comments ignored. It calls fn for every
// valid URL and bad for every invalid line (and goes on); it returns an error only when r fails or a line is
// longer than MaxSeedLine.
func ReadSeeds(r io.Reader, fn func(line int, u *url.URL) error, bad func(*SeedError)) error {
	var n int
	return readSeeds(r, func(line int, s Seed) error { return fn(line, s.URL) }, bad, &n)
}

// ReadSeedFile is ReadSeeds with each seed's score (see ParseSeed).
func ReadSeedFile(r io.Reader, fn func(line int, s Seed) error, bad func(*SeedError)) error {
	var n int
	return readSeeds(r, fn, bad, &n)
}

func readSeeds(r io.Reader, fn func(line int, s Seed) error, bad func(*SeedError), lines *int) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxSeedLine)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if n == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a UTF-8 byte order mark
		}
		*lines = n
		seed, err := ParseSeed(text)
		if err != nil {
			if bad != nil {
				se, ok := err.(*SeedError)
				if !ok {
					se = &SeedError{Text: text, Err: err}
				}
				se.Line = n
				bad(se)
			}
			continue
		}
		if seed.URL != nil {
			if err := fn(n, seed); err != nil {
				return err
			}
		}
	}
	*lines = n
	if err := sc.Err(); err != nil {
		return fmt.Errorf("spider: seeds: after line %d: %w", n, err)
	}
	return nil
}

// InjectSeeds publishes the seeds of the file at path as add_seeds messages on the spider log, one message
// per host (up to 1,000 seeds each), keyed by the host's domain fingerprint like every spider-log message, so
// each strategy worker receives the seeds of the hosts it owns.
//
// Seeds are injected once per crawl: after every message is acknowledged the spider writes a marker named
// after the SHA-256 of the file's content into Config.StateDir/seeds, and a file whose marker exists is
// skipped. A crash before the marker is written re-sends the seeds, which is harmless: the strategy worker's
// URL-seen test drops seeds it already knows. Edit the file (or remove the marker) to inject again.
func (s *Spider) InjectSeeds(ctx context.Context, path string) error {
	sum, err := fileSHA256(path)
	if err != nil {
		return err
	}
	var marker string
	dir := ""
	if s.cfg.StateDir != "" {
		dir = filepath.Join(s.cfg.StateDir, "seeds")
		marker = filepath.Join(dir, "seeds-"+sum+".done")
		if _, err := os.Stat(marker); err == nil {
			s.log.Info("seeds already injected; skipped", "file", path, "sha256", sum, "marker", marker)
			return nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("spider: seeds: %w", err)
	}
	defer f.Close()

	byHost := map[string][]*frontier.Request{}
	var order []string
	total, invalid := 0, 0
	ns := &NoSeedsError{Path: path}
	flush := func(key string) error {
		seeds := byHost[key]
		if len(seeds) == 0 {
			return nil
		}
		b, err := s.deps.Codec.EncodeMessage(&frontier.AddSeeds{Seeds: seeds})
		if err != nil {
			return fmt.Errorf("spider: seeds: encode add_seeds: %w", err)
		}
		if err := s.deps.Log.Send(ctx, bus.Message{Key: []byte(key), Value: b}); err != nil {
			return fmt.Errorf("spider: seeds: send add_seeds: %w", err)
		}
		s.m.seeds.Add(float64(len(seeds)))
		byHost[key] = seeds[:0]
		return nil
	}
	err = readSeeds(f, func(_ int, seed Seed) error {
		u := seed.URL
		r := &frontier.Request{URL: u.String(), Method: http.MethodGet}
		if seed.HasScore {
			r.SetMetaScore(seed.Score)
		}
		fp, err := s.id.Fingerprint(r.URL)
		if err != nil {
			return fmt.Errorf("spider: seeds: fingerprint %s: %w", r.URL, err)
		}
		r.SetMetaFingerprint(fp)
		d := s.id.Domain(u)
		r.SetMetaDomain(d)
		if _, ok := byHost[d.Fingerprint]; !ok {
			order = append(order, d.Fingerprint)
		}
		byHost[d.Fingerprint] = append(byHost[d.Fingerprint], r)
		total++
		if len(byHost[d.Fingerprint]) >= seedsPerMessage {
			return flush(d.Fingerprint)
		}
		return nil
	}, func(e *SeedError) {
		invalid++
		ns.NBad++
		if len(ns.Bad) < maxSeedErrors {
			ns.Bad = append(ns.Bad, e)
		}
		s.m.seedsInvalid.Inc()
		s.log.Warn("invalid seed line skipped", "file", path, "err", e)
	}, &ns.Lines)
	if err != nil {
		return err
	}
	if total == 0 {
		return ns
	}
	for _, k := range order {
		if err := flush(k); err != nil {
			return err
		}
	}
	s.log.Info("seeds injected", "file", path, "seeds", total, "invalid_lines", invalid, "hosts", len(order))
	if marker != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("spider: seeds marker: %w", err)
		}
		note := fmt.Sprintf("file=%s\nseeds=%d\ninvalid=%d\nat=%s\n", path, total, invalid, time.Now().UTC().Format(time.RFC3339))
		if err := os.WriteFile(marker, []byte(note), 0o644); err != nil {
			return fmt.Errorf("spider: seeds marker: %w", err)
		}
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("spider: seeds: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("spider: seeds: read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
