package identity

import "strings"

// The fast path of w3lib 2.5's canonical form.
//
// Most URLs a crawler fingerprints are already canonical, or canonical but for a fragment: the links of a
// page as the spider resolves them (lower-case scheme and host, a path of plain characters, often no query)
// and the URLs of its feed. fastCanon25 recognises a restricted shape of URL whose canonical form it knows
// without rebuilding it, and canon25 returns that shape as it is; anything outside the shape takes the full
// algorithm (canon25Slow). The shape is chosen so that each step of canon25Slow visibly leaves it unchanged:
//
//   - "http://" or "https://" (the scheme already lower-case, special: "\\" would be read as "/", so none is
//     accepted anywhere), then a host of lower-case ASCII letters, digits, "-" and "." (no user info, no
//     IPv6 literal, nothing to lower-case or IDNA-encode), then optionally ":" and a port of 1 to 5 digits
//     without a leading zero and at most 65535 (printed back as the same number);
//   - a path that starts with "/" (an empty one would become "/"), of characters w3lib leaves unquoted in a
//     path (_PATH_SAFEST_CHARS) but "%" (no escape to decode and re-encode) and ";" (no params), with no "."
//     or ".." segment (nothing to remove);
//   - optionally "?" and a non-empty query of fields "name=value" (a field without "=" gains one, an empty
//     field is dropped) whose names and values are unreserved characters and "+" (unquote_plus then
//     quote_plus give them back; "+" is a space both ways), already in the order w3lib sorts the decoded
//     pairs in (bytes order of name then value: "+" and its decoded space both sort below every unreserved
//     character, so the raw order is the decoded order), and no empty value when blank values are dropped;
//   - optionally "#" and anything: the fragment is dropped (canon25Slow splits it off before anything else
//     looks at it, and the stripping of controls and spaces, the only step that reads the whole URL, can
//     only change characters after the "#"), unless KeepFragments is set, when a "#" leaves the fast path.
//
// It returns the canonical form, a prefix of s. FuzzCanonicalFast holds it to canon25Slow, and the golden
// vectors go through it.
func (o CanonOptions) fastCanon25(s string) (string, bool) {
	var rest string
	switch {
	case strings.HasPrefix(s, "http://"):
		rest = s[len("http://"):]
	case strings.HasPrefix(s, "https://"):
		rest = s[len("https://"):]
	default:
		return "", false
	}
	i := 0
	for i < len(rest) {
		if c := rest[i]; 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' {
			i++
			continue
		}
		break
	}
	if i == 0 || i == len(rest) {
		return "", false
	}
	if rest[i] == ':' {
		j := i + 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		port := rest[i+1 : j]
		if port == "" || len(port) > 5 || port[0] == '0' || len(port) == 5 && port > "65535" {
			return "", false
		}
		i = j
	}
	if i == len(rest) || rest[i] != '/' {
		return "", false
	}
	// The path: from rest[i] to "?", "#" or the end.
	j := i
	for ; j < len(rest); j++ {
		c := rest[j]
		if c == '?' || c == '#' {
			break
		}
		if !setPathSafest[c] || c == '%' || c == ';' {
			return "", false
		}
		if c == '.' && rest[j-1] == '/' { // a "." or ".." segment?
			k := j + 1
			if k < len(rest) && rest[k] == '.' {
				k++
			}
			if k == len(rest) || rest[k] == '/' || rest[k] == '?' || rest[k] == '#' {
				return "", false
			}
		}
	}
	if j < len(rest) && rest[j] == '?' {
		j++
		if j == len(rest) || rest[j] == '#' {
			return "", false // an empty query: its "?" is dropped
		}
		var prev string // the previous field
		for {
			start := j
			eq := -1
			for ; j < len(rest) && rest[j] != '&' && rest[j] != '#'; j++ {
				c := rest[j]
				switch {
				case c == '=' && eq < 0:
					eq = j
				case setUnreserved[c] || c == '+':
				default:
					return "", false
				}
			}
			if eq < 0 || o.DropBlankValues && eq == j-1 {
				return "", false // no "=", or a blank value dropped (an empty field has no "=" either)
			}
			field := rest[start:j]
			if prev != "" && !fieldsOrdered(prev, field) {
				return "", false
			}
			prev = field
			if j == len(rest) || rest[j] == '#' {
				break
			}
			j++ // "&"
		}
	}
	if j < len(rest) { // rest[j] == '#'
		if o.KeepFragments {
			return "", false
		}
		return s[:len(s)-len(rest)+j], true
	}
	return s, true
}

// fieldsOrdered reports whether the query fields a and b ("name=value", of unreserved characters and "+")
// are in the order w3lib sorts the decoded pairs in: by name, then by value.
func fieldsOrdered(a, b string) bool {
	ak, av, _ := strings.Cut(a, "=")
	bk, bv, _ := strings.Cut(b, "=")
	if ak != bk {
		return ak < bk
	}
	return av <= bv
}
