// Package sitemap reads sitemaps (https://www.sitemaps.org/protocol.html) as a stream: urlsets and sitemap
// indexes in XML, plain-text lists of URLs, either of them gzip-compressed. A crawl uses them as a source of
// URLs that no page links to, and their lastmod, changefreq and priority as hints for its strategy.
//
// Why a parser of its own: no Go sitemap module is served by the module proxy, and a sitemap may be 50 MB
// uncompressed: Parse reads it token by token with encoding/xml (or line by line), calls back once per entry and
// keeps nothing of what it read, so memory stays flat whatever the file's size.
//
// The protocol's limits are enforced, each with an error naming the file and the limit: at most MaxURLs
// entries (50,000) and MaxBytes uncompressed bytes (50 MB) a file; entries past a limit are not returned. Index
// depth is the caller's (an index lists sitemaps, which must not be indexes again: Options.Depth and MaxDepth).
//
// Cross-host rule (sitemaps.org, "Sitemap file location"): a sitemap at http://example.com/catalog/sitemap.xml
// may list URLs of http://example.com/catalog/ only, unless the robots.txt of the URLs' host listed it
// (Options.Owner): then it may list any URL of that host. Other entries are skipped and counted (Stats).
//
// The package imports only the standard library.
package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Limits of sitemaps.org.
const (
	MaxURLs  = 50_000
	MaxBytes = 50_000_000
	// MaxDepth is the deepest sitemap Parse reads: 1 for a sitemap named by a seed or robots.txt, 2 for one
	// listed in an index. An index found at MaxDepth is refused (ErrDepth): indexes do not nest.
	MaxDepth = 2
	// MaxLocBytes is the longest loc accepted (sitemaps.org: less than 2,048 characters).
	MaxLocBytes = 2048
)

// Kind is what a sitemap file turned out to be.
type Kind int

// Kinds of sitemap files.
const (
	Unknown Kind = iota
	URLSet       // <urlset>: page URLs
	Index        // <sitemapindex>: sitemap URLs
	Text         // one URL a line
)

func (k Kind) String() string {
	switch k {
	case URLSet:
		return "urlset"
	case Index:
		return "sitemapindex"
	case Text:
		return "text"
	}
	return "unknown"
}

// Entry is one <url> of a urlset, one <sitemap> of an index, or one line of a text sitemap.
type Entry struct {
	Loc        string    // absolute URL
	LastMod    time.Time // zero when absent or unparsable
	ChangeFreq string    // always, hourly, daily, weekly, monthly, yearly, never; "" when absent or invalid
	Priority   float64   // 0..1; meaningful when HasPriority
	// HasPriority is false when the entry gives no (valid) priority: the protocol's default is 0.5.
	HasPriority bool
	// Sitemap is true for an entry of an index: Loc is another sitemap.
	Sitemap bool
}

// Options are the context of one sitemap file.
type Options struct {
	// URL is where the sitemap was fetched from (after redirects): the base of the cross-host rule.
	URL *url.URL
	// Owner is the host (host[:port], lower case) whose robots.txt listed the sitemap, "" if none did.
	Owner string
	// Depth is 1 for a sitemap named by a seed or robots.txt, 2 for one listed in an index.
	Depth int
}

// Stats counts what Parse read.
type Stats struct {
	Kind      Kind
	Entries   int   // entries returned
	Skipped   int   // entries refused: not a URL, too long, or outside the cross-host rule
	Bytes     int64 // uncompressed bytes read
	Truncated bool  // a limit stopped the file
}

// Errors (wrapped with the file's URL).
var (
	ErrTooLarge   = errors.New("sitemap: more than 50 MB uncompressed")
	ErrTooMany    = errors.New("sitemap: more than 50,000 entries")
	ErrDepth      = errors.New("sitemap: an index inside an index")
	ErrNotSitemap = errors.New("sitemap: not a urlset, sitemap index or text sitemap")
)

// Parse reads one sitemap from r (gzip-compressed or not) and calls fn for each entry allowed, in order. fn's
// error stops Parse and is returned. The error of a limit (ErrTooLarge, ErrTooMany) comes after the entries
// before it were returned; Stats says how far it got.
func Parse(r io.Reader, opts Options, fn func(Entry) error) (Stats, error) {
	var st Stats
	name := "sitemap"
	if opts.URL != nil {
		name = opts.URL.String()
	}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return st, fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	lr := &limitReader{r: br, n: MaxBytes}
	in := bufio.NewReader(lr)
	emit := func(e Entry) error {
		if st.Entries >= MaxURLs {
			st.Truncated = true
			return ErrTooMany
		}
		if !allowed(opts, e.Loc) {
			st.Skipped++
			return nil
		}
		st.Entries++
		return fn(e)
	}
	var err error
	if isXML(in) {
		err = parseXML(in, opts, &st, emit)
	} else {
		st.Kind = Text
		err = parseText(in, emit)
	}
	st.Bytes = MaxBytes - lr.n
	if errors.Is(err, ErrTooLarge) {
		st.Truncated = true
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", name, err)
	}
	return st, nil
}

// limitReader fails with ErrTooLarge past n bytes.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One byte more tells a file of exactly the limit from a longer one.
		var b [1]byte
		if n, _ := l.r.Read(b[:]); n > 0 {
			return 0, ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// isXML reports whether the first non-space byte (after a byte order mark) is '<'.
func isXML(r *bufio.Reader) bool {
	for i := 1; i <= 1024; i++ {
		b, err := r.Peek(i)
		if len(b) < i {
			return false
		}
		b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 {
			return t[0] == '<'
		}
		if err != nil {
			return false
		}
	}
	return false
}

func parseText(r *bufio.Reader, emit func(Entry) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\xEF\xBB\xBF"))
		if line == "" {
			continue
		}
		if err := emit(Entry{Loc: line}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return err
	}
	return nil
}

func parseXML(r io.Reader, opts Options, st *Stats, emit func(Entry) error) error {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil } // UTF-8 by protocol
	var cur *Entry
	field := ""
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if st.Kind == Unknown {
				return ErrNotSitemap
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return ErrTooLarge
			}
			if st.Kind == Unknown {
				return fmt.Errorf("%w: %v", ErrNotSitemap, err)
			}
			return fmt.Errorf("sitemap: XML: %w", err) // the entries before were returned
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case st.Kind == Unknown:
				switch name {
				case "urlset":
					st.Kind = URLSet
				case "sitemapindex":
					if opts.Depth >= MaxDepth {
						st.Kind = Index
						return ErrDepth
					}
					st.Kind = Index
				default:
					return fmt.Errorf("%w: root element <%s>", ErrNotSitemap, t.Name.Local)
				}
			case cur == nil && (name == "url" && st.Kind == URLSet || name == "sitemap" && st.Kind == Index):
				cur = &Entry{Sitemap: st.Kind == Index}
			case cur != nil && t.Name.Space == "" || cur != nil && strings.HasPrefix(t.Name.Space, "http://www.sitemaps.org/"):
				field = name
				text.Reset()
			}
		case xml.CharData:
			if cur != nil && field != "" && text.Len() < MaxLocBytes+1 {
				text.Write(t)
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case cur != nil && field != "" && name == field:
				setField(cur, field, strings.TrimSpace(text.String()))
				field = ""
			case cur != nil && (name == "url" || name == "sitemap"):
				e := *cur
				cur = nil
				if e.Loc == "" {
					st.Skipped++
					continue
				}
				if err := emit(e); err != nil {
					return err
				}
			}
		}
	}
}

func setField(e *Entry, field, v string) {
	switch field {
	case "loc":
		if len(v) <= MaxLocBytes {
			e.Loc = v
		}
	case "lastmod":
		e.LastMod = ParseW3CDate(v)
	case "changefreq":
		switch v = strings.ToLower(v); v {
		case "always", "hourly", "daily", "weekly", "monthly", "yearly", "never":
			e.ChangeFreq = v
		}
	case "priority":
		if p, err := strconv.ParseFloat(v, 64); err == nil && p >= 0 && p <= 1 {
			e.Priority, e.HasPriority = p, true
		}
	}
}

// w3cLayouts are the W3C Datetime forms lastmod takes (https://www.w3.org/TR/NOTE-datetime).
var w3cLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", time.DateOnly, "2006-01", "2006"}

// ParseW3CDate parses a W3C Datetime (2026-11-25, 2026-11-25T13:00:00+01:00, …); the zero time when it is none.
func ParseW3CDate(s string) time.Time {
	for _, l := range w3cLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// allowed applies the cross-host rule to loc.
func allowed(opts Options, loc string) bool {
	u, err := url.Parse(loc)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	if opts.URL == nil {
		return true
	}
	host := strings.ToLower(u.Host)
	if opts.Owner != "" && host == strings.ToLower(opts.Owner) {
		return true
	}
	base := opts.URL
	if !strings.EqualFold(u.Scheme, base.Scheme) || host != strings.ToLower(base.Host) {
		return false
	}
	dir := base.EscapedPath()
	dir = dir[:strings.LastIndex(dir, "/")+1]
	return strings.HasPrefix(u.EscapedPath(), dir)
}
