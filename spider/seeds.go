package spider

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	frontier "github.com/frontiercrawl/frontier"
	"github.com/frontiercrawl/frontier/bus"
	"github.com/frontiercrawl/frontier/spider/links"
)

// MaxSeedLine is the longest seed-file line accepted, in bytes.
const MaxSeedLine = 64 << 10

// seedsPerMessage bounds the seeds of one add_seeds message.
const seedsPerMessage = 1000

// ParseSeedLine parses one line of a seed file. It returns (nil, nil) for a blank line or a comment (a line
// whose first non-space character is '#'). A URL may be followed by spaces and a '#' comment. Anything else
// that is not an absolute http(s) URL with a host is an error naming the problem.
func ParseSeedLine(line string) (*url.URL, error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return nil, nil
	}
	fields := strings.Fields(line)
	if len(fields) > 1 && !strings.HasPrefix(fields[1], "#") {
		return nil, fmt.Errorf("spider: seed %q: more than one word (a comment must start with #)", line)
	}
	raw := fields[0]
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("spider: seed %q: not an absolute URL (want http:// or https://)", raw)
	}
	u, err := links.Resolve(nil, raw)
	if err != nil {
		return nil, fmt.Errorf("spider: seed %q: %w", raw, err)
	}
	return u, nil
}

// SeedError is an invalid line of a seed file.
type SeedError struct {
	Line int
	Text string
	Err  error
}

func (e *SeedError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// ReadSeeds reads a seed file: one URL a line, blank lines and '#' comments ignored. It calls fn for every
// valid URL and bad for every invalid line (and goes on); it returns an error only when r fails or a line is
// longer than MaxSeedLine.
func ReadSeeds(r io.Reader, fn func(line int, u *url.URL) error, bad func(*SeedError)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxSeedLine)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if n == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a UTF-8 byte order mark
		}
		u, err := ParseSeedLine(text)
		if err != nil {
			if bad != nil {
				bad(&SeedError{Line: n, Text: text, Err: err})
			}
			continue
		}
		if u != nil {
			if err := fn(n, u); err != nil {
				return err
			}
		}
	}
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
	err = ReadSeeds(f, func(_ int, u *url.URL) error {
		r := &frontier.Request{URL: u.String(), Method: http.MethodGet}
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
		s.m.seedsInvalid.Inc()
		s.log.Warn("invalid seed line skipped", "file", path, "line", e.Line, "err", e.Err)
	})
	if err != nil {
		return err
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
