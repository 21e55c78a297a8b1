package scope

import (
	"hash/fnv"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Placeholder is what Template writes for a collapsed token (a number, a date's parts, a hex or ID-like token).
const Placeholder = "{x}"

// Template returns the shape of a URL's path and query: what stays when the parts that enumerate a URL space
// are collapsed, so that the pages of one calendar, one pager or one session-id trap share one template.
//
// The escaped path and every query argument are cut into tokens (maximal runs of ASCII letters and digits;
// percent-escapes and every other byte are kept as they are). A token with a digit is collapsed:
//   - entirely to Placeholder when it is all hex digits (1, 2026, 0x-less hex like 5f3a9c, a UUID's parts) or
//     an ID-like mix of at least 8 letters and digits with two or more runs of digits (aZ3kQ9xB);
//   - otherwise only its runs of digits are (page12 → page{x}, top-10 → top-{x}).
//
// Tokens without digits are kept: /articles/apple-pie and /articles/plum-jam are two templates, and so are
// ?lang=en and ?lang=fr. Query arguments are sorted (their order does not make a new template), the fragment
// and the host are left out (a template is counted per host). So /cal/1 and /cal/2 are /cal/{x};
// ?date=2026-11-25 and ?date=2026-11-26 are ?date={x}-{x}-{x}; /post/123 and /post/124 are /post/{x}.
func Template(u *url.URL) string {
	var b strings.Builder
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	collapse(&b, p)
	if u.RawQuery == "" {
		return b.String()
	}
	args := strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' })
	out := make([]string, 0, len(args))
	var a strings.Builder
	for _, arg := range args {
		a.Reset()
		collapse(&a, arg)
		out = append(out, a.String())
	}
	slices.Sort(out)
	b.WriteByte('?')
	b.WriteString(strings.Join(out, "&"))
	return b.String()
}

// TemplateKey is the key of u's template in the per-host template budget: the host name (lower-cased) and a
// 64-bit hash of Template(u), so that the key's size does not grow with the URL.
func TemplateKey(u *url.URL) string {
	h := fnv.New64a()
	h.Write([]byte(Template(u)))
	return strings.ToLower(u.Hostname()) + " t" + strconv.FormatUint(h.Sum64(), 16)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// collapse writes s to b with its tokens collapsed as Template says.
func collapse(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteString(s[i : i+3]) // an escape is a byte, not a token: %20 is no number
			i += 3
			continue
		}
		if !isAlnum(c) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(s) && isAlnum(s[j]) {
			j++
		}
		token(b, s[i:j])
		i = j
	}
}

// token writes one token, collapsed if it has a digit.
func token(b *strings.Builder, t string) {
	digits, runs, hex := 0, 0, true
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= '0' && c <= '9' {
			digits++
			if i == 0 || t[i-1] < '0' || t[i-1] > '9' {
				runs++
			}
		}
		if !isHex(c) {
			hex = false
		}
	}
	switch {
	case digits == 0:
		b.WriteString(t)
	case hex || len(t) >= 8 && runs >= 2:
		b.WriteString(Placeholder)
	default:
		for i := 0; i < len(t); {
			if t[i] < '0' || t[i] > '9' {
				b.WriteByte(t[i])
				i++
				continue
			}
			for i < len(t) && t[i] >= '0' && t[i] <= '9' {
				i++
			}
			b.WriteString(Placeholder)
		}
	}
}
