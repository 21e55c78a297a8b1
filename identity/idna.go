package identity

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file reproduces the pieces of CPython 3.11 that w3lib's canonicalize_url reaches for non-ASCII
// hosts: the "idna" codec (IDNA 2003: nameprep, then punycode, per label), unicodedata's NFKC under
// Unicode 3.2 (nameprep's) and under the interpreter's Unicode 14 (urllib's and w3lib 2.x's NFKC checks),
// and str.lower() with its Final_Sigma rule. golang.org/x/net/idna implements UTS #46 (IDNA 2008 with
// compatibility mapping) and golang.org/x/text/unicode/norm carries Unicode 15; both differ from Python
// on some inputs (symbols IDNA 2008 disallows, code points assigned after 3.2 or after 14.0), so the
// tables in idna_tables.go are generated from the Python interpreter itself (oracle/gen_canon.py tables).
// Only non-ASCII hosts reach this code, so it favours simplicity over speed.

type runeRange struct{ lo, hi rune }

type runeSet []runeRange

func (s runeSet) has(r rune) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].hi >= r })
	return i < len(s) && s[i].lo <= r
}

func parseHex(s string) rune {
	n, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		panic("identity: bad generated table entry " + strconv.Quote(s))
	}
	return rune(n)
}

func parseRanges(s string) runeSet {
	var out runeSet
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			continue
		}
		lo, hi, ok := strings.Cut(f, "-")
		if !ok {
			hi = lo
		}
		out = append(out, runeRange{parseHex(lo), parseHex(hi)})
	}
	return out
}

func parseSeq(s string) []rune {
	if s == "" {
		return []rune{}
	}
	var out []rune
	for _, f := range strings.Fields(s) {
		out = append(out, parseHex(f))
	}
	return out
}

func parseMapping(s string, into map[rune][]rune) {
	for _, e := range strings.Split(s, ";") {
		if e == "" {
			continue
		}
		k, v, _ := strings.Cut(e, ":")
		into[parseHex(k)] = parseSeq(v)
	}
}

func parseComp(s string) map[[2]rune]rune {
	m := make(map[[2]rune]rune)
	for _, e := range strings.Split(s, ";") {
		if e == "" {
			continue
		}
		ab, c, _ := strings.Cut(e, ":")
		a, b, _ := strings.Cut(ab, " ")
		m[[2]rune{parseHex(a), parseHex(b)}] = parseHex(c)
	}
	return m
}

// normTables is one Unicode version's data for NFKC.
type normTables struct {
	nfkd map[rune][]rune
	ccc  map[rune]uint8
	comp map[[2]rune]rune
}

type unicodeTables struct {
	b1, prohibited, d1, d2 runeSet
	b2                     map[rune][]rune
	norm14, norm32         normTables
	lower                  map[rune][]rune
	cased, caseIgnorable   runeSet
}

var (
	uniOnce sync.Once
	uni     *unicodeTables
)

func tables() *unicodeTables {
	uniOnce.Do(func() {
		t := &unicodeTables{
			b1:            parseRanges(tabStringprepB1),
			prohibited:    parseRanges(tabStringprepProhibited),
			d1:            parseRanges(tabStringprepD1),
			d2:            parseRanges(tabStringprepD2),
			b2:            map[rune][]rune{},
			lower:         map[rune][]rune{},
			cased:         parseRanges(tabCased),
			caseIgnorable: parseRanges(tabCaseIgnorable),
		}
		parseMapping(tabStringprepB2, t.b2)
		parseMapping(tabLower, t.lower)
		t.norm14 = normTables{nfkd: map[rune][]rune{}, ccc: map[rune]uint8{}, comp: parseComp(tabComp14)}
		parseMapping(tabNFKD14, t.norm14.nfkd)
		for _, e := range strings.Split(tabCCC14, ",") {
			rg, k, _ := strings.Cut(e, ":")
			lo, hi, ok := strings.Cut(rg, "-")
			if !ok {
				hi = lo
			}
			n, _ := strconv.Atoi(k)
			for r := parseHex(lo); r <= parseHex(hi); r++ {
				t.norm14.ccc[r] = uint8(n)
			}
		}
		t.norm32 = normTables{nfkd: map[rune][]rune{}, comp: parseComp(tabComp32)}
		for k, v := range t.norm14.nfkd {
			t.norm32.nfkd[k] = v
		}
		// CPython orders and blocks marks with the current classes even under ucd_3_2_0.
		t.norm32.ccc = t.norm14.ccc
		diff := map[rune][]rune{}
		parseMapping(tabNFKD32Diff, diff)
		for k, v := range diff {
			if len(v) == 0 {
				delete(t.norm32.nfkd, k)
			} else {
				t.norm32.nfkd[k] = v
			}
		}
		uni = t
	})
	return uni
}

const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulNCount
)

// nfkc normalises s to NFKC with the given tables, as unicodedata.normalize("NFKC", s) does.
func (nt *normTables) nfkc(s string) string {
	// Decompose.
	d := make([]rune, 0, len(s))
	for _, r := range s {
		if r >= hangulSBase && r < hangulSBase+hangulSCount {
			si := r - hangulSBase
			d = append(d, hangulLBase+si/hangulNCount, hangulVBase+(si%hangulNCount)/hangulTCount)
			if t := si % hangulTCount; t != 0 {
				d = append(d, hangulTBase+t)
			}
			continue
		}
		if m, ok := nt.nfkd[r]; ok {
			d = append(d, m...)
			continue
		}
		d = append(d, r)
	}
	// Canonical ordering: a stable sort of each run of non-starters by combining class.
	for i := 0; i < len(d); {
		if nt.ccc[d[i]] == 0 {
			i++
			continue
		}
		j := i
		for j < len(d) && nt.ccc[d[j]] != 0 {
			j++
		}
		run := d[i:j]
		sort.SliceStable(run, func(a, b int) bool { return nt.ccc[run[a]] < nt.ccc[run[b]] })
		i = j
	}
	// Compose.
	if len(d) == 0 {
		return ""
	}
	out := d[:1]
	starter := -1
	if nt.ccc[d[0]] == 0 {
		starter = 0
	}
	lastClass := int(nt.ccc[d[0]])
	if lastClass != 0 {
		lastClass = 256
	}
	for _, r := range d[1:] {
		cc := int(nt.ccc[r])
		if starter >= 0 && (lastClass < cc || lastClass == 0) {
			if c, ok := nt.compose(out[starter], r); ok {
				out[starter] = c
				continue
			}
		}
		if cc == 0 {
			starter = len(out)
		}
		lastClass = cc
		out = append(out, r)
	}
	return string(out)
}

func (nt *normTables) compose(a, b rune) (rune, bool) {
	if a >= hangulLBase && a < hangulLBase+hangulLCount && b >= hangulVBase && b < hangulVBase+hangulVCount {
		return hangulSBase + ((a-hangulLBase)*hangulVCount+(b-hangulVBase))*hangulTCount, true
	}
	if a >= hangulSBase && a < hangulSBase+hangulSCount && (a-hangulSBase)%hangulTCount == 0 &&
		b > hangulTBase && b < hangulTBase+hangulTCount {
		return a + (b - hangulTBase), true
	}
	c, ok := nt.comp[[2]rune{a, b}]
	return c, ok
}

// nfkc14 is unicodedata.normalize("NFKC", s) of CPython 3.11 (Unicode 14.0.0).
func nfkc14(s string) string { return tables().norm14.nfkc(s) }

// pyLower is Python 3's str.lower(): full lower-case mappings plus the Final_Sigma context for U+03A3.
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return asciiLower(s)
	}
	t := tables()
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if r == 0x3A3 {
			b.WriteRune(t.sigma(rs, i))
			continue
		}
		if m, ok := t.lower[r]; ok {
			for _, x := range m {
				b.WriteRune(x)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (t *unicodeTables) sigma(rs []rune, i int) rune {
	j := i - 1
	for j >= 0 && t.caseIgnorable.has(rs[j]) {
		j--
	}
	final := j >= 0 && t.cased.has(rs[j])
	if final && i+1 < len(rs) {
		j = i + 1
		for j < len(rs) && t.caseIgnorable.has(rs[j]) {
			j++
		}
		final = j == len(rs) || !t.cased.has(rs[j])
	}
	if final {
		return 0x3C2
	}
	return 0x3C3
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

var errIDNA = errors.New("identity: idna: label empty, too long or invalid")

// nameprep is RFC 3491 as CPython's encodings.idna implements it (no check for unassigned code points).
func nameprep(label []rune) ([]rune, error) {
	t := tables()
	var mapped []rune
	for _, r := range label {
		if t.b1.has(r) {
			continue
		}
		if m, ok := t.b2[r]; ok {
			mapped = append(mapped, m...)
			continue
		}
		mapped = append(mapped, r)
	}
	out := []rune(t.norm32.nfkc(string(mapped)))
	for _, r := range out {
		if t.prohibited.has(r) {
			return nil, errIDNA
		}
	}
	anyRandAL := false
	for _, r := range out {
		if t.d1.has(r) {
			anyRandAL = true
			break
		}
	}
	if anyRandAL {
		for _, r := range out {
			if t.d2.has(r) {
				return nil, errIDNA
			}
		}
		if !t.d1.has(out[0]) || !t.d1.has(out[len(out)-1]) {
			return nil, errIDNA
		}
	}
	return out, nil
}

func isASCIIRunes(rs []rune) bool {
	for _, r := range rs {
		if r >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// toASCII is encodings.idna.ToASCII for one label.
func toASCII(label []rune) (string, error) {
	if isASCIIRunes(label) {
		if len(label) > 0 && len(label) < 64 {
			return string(label), nil
		}
		return "", errIDNA
	}
	label, err := nameprep(label)
	if err != nil {
		return "", err
	}
	if isASCIIRunes(label) {
		if len(label) > 0 && len(label) < 64 {
			return string(label), nil
		}
		return "", errIDNA
	}
	if strings.HasPrefix(string(label), "xn--") {
		return "", errIDNA
	}
	p := "xn--" + punycode(label)
	if len(p) < 64 {
		return p, nil
	}
	return "", errIDNA
}

func isIDNADot(r rune) bool { return r == '.' || r == 0x3002 || r == 0xFF0E || r == 0xFF61 }

// pyIDNAEncode is CPython 3.11's str.encode("idna").
func pyIDNAEncode(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		labels := strings.Split(s, ".")
		for _, l := range labels[:len(labels)-1] {
			if len(l) == 0 || len(l) >= 64 {
				return "", errIDNA
			}
		}
		if len(labels[len(labels)-1]) >= 64 {
			return "", errIDNA
		}
		return s, nil
	}
	var labels [][]rune
	cur := []rune{}
	for _, r := range s {
		if isIDNADot(r) {
			labels = append(labels, cur)
			cur = []rune{}
			continue
		}
		cur = append(cur, r)
	}
	labels = append(labels, cur)
	trailing := ""
	if len(labels[len(labels)-1]) == 0 {
		trailing = "."
		labels = labels[:len(labels)-1]
	}
	var b strings.Builder
	for _, l := range labels {
		a, err := toASCII(l)
		if err != nil {
			return "", err
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(a)
	}
	b.WriteString(trailing)
	return b.String(), nil
}

// punycode is RFC 3492 encoding as CPython's "punycode" codec does it (no case annotation).
func punycode(input []rune) string {
	const (
		base        = 36
		tmin        = 1
		tmax        = 26
		skew        = 38
		damp        = 700
		initialBias = 72
		initialN    = 128
	)
	var out []byte
	for _, r := range input {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	n := rune(initialN)
	delta := 0
	bias := initialBias
	adapt := func(delta, numPoints int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / numPoints
		k := 0
		for delta > ((base-tmin)*tmax)/2 {
			delta /= base - tmin
			k += base
		}
		return k + (base-tmin+1)*delta/(delta+skew)
	}
	digit := func(d int) byte {
		if d < 26 {
			return byte('a' + d)
		}
		return byte('0' + d - 26)
	}
	for h < len(input) {
		m := rune(0x7FFFFFFF)
		for _, r := range input {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int(m-n) * (h + 1)
		n = m
		for _, r := range input {
			if r < n {
				delta++
			}
			if r == n {
				q := delta
				for k := base; ; k += base {
					t := k - bias
					if t < tmin {
						t = tmin
					} else if t > tmax {
						t = tmax
					}
					if q < t {
						break
					}
					out = append(out, digit(t+(q-t)%(base-t)))
					q = (q - t) / (base - t)
				}
				out = append(out, digit(q))
				bias = adapt(delta, h+1, h == b)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return string(out)
}

// The Unicode steps above run only for non-ASCII hosts, but a crawl meets the same hosts again and
// again, so their results are memoised (w3lib does the same with functools caches). The memo is
// bounded: when it holds memoMax entries it is emptied.
const memoMax = 8192

type memoKey struct {
	kind uint8
	s    string
}

type memoVal struct {
	s   string
	err error
}

const (
	memoNFKC14 uint8 = iota
	memoIDNA
	memoLower
	memoCheck122
	memoCheck25
	memoHost25
)

var memo struct {
	sync.RWMutex
	m map[memoKey]memoVal
}

func memoized(kind uint8, s string, f func(string) (string, error)) (string, error) {
	k := memoKey{kind, s}
	memo.RLock()
	v, ok := memo.m[k]
	memo.RUnlock()
	if ok {
		return v.s, v.err
	}
	r, err := f(s)
	memo.Lock()
	if memo.m == nil || len(memo.m) >= memoMax {
		memo.m = make(map[memoKey]memoVal, 256)
	}
	memo.m[memoKey{kind, strings.Clone(s)}] = memoVal{r, err}
	memo.Unlock()
	return r, err
}

// nfkc14Cached, idnaCached and lowerCached are the memoised forms the canonicaliser calls.
func nfkc14Cached(s string) string {
	r, _ := memoized(memoNFKC14, s, func(s string) (string, error) { return nfkc14(s), nil })
	return r
}

func idnaCached(s string) (string, error) { return memoized(memoIDNA, s, pyIDNAEncode) }

func lowerCached(s string) string {
	if isASCII(s) {
		return asciiLower(s)
	}
	r, _ := memoized(memoLower, s, func(s string) (string, error) { return pyLower(s), nil })
	return r
}

// host25Cached is w3lib 2.x's host pipeline for a non-ASCII host name without ":" or "%": str.lower()
// (_SplitResult), NFKC and the idna codec (_idna; the lowered name itself when that fails), then
// canonicalize_url's lower() of the result.
func host25Cached(hostname string) string {
	r, _ := memoized(memoHost25, hostname, func(h string) (string, error) {
		h = pyLower(h)
		if enc, err := pyIDNAEncode(nfkc14(h)); err == nil {
			h = enc
		}
		return pyLower(h), nil
	})
	return r
}
