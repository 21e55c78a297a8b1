package identity

import (
	"strconv"
	"strings"
)

// Python 3.11's ipaddress parsing and formatting, as far as urllib's bracketed-host check and w3lib 2.x's
// IPv6 normalisation use them. net/netip differs in what it accepts (it takes IPv4 octets with leading
// zeros in some forms, zones with '%' in them) and in how it prints IPv4-mapped addresses, so the rules are
// spelled out here.

// pyParseIPv4 is ipaddress.IPv4Address(s).
func pyParseIPv4(s string) (uint32, bool) {
	if s == "" || strings.IndexByte(s, '/') >= 0 {
		return 0, false
	}
	var v uint32
	n := 0
	for oct := range strings.SplitSeq(s, ".") {
		n++
		if n > 4 || oct == "" || len(oct) > 3 {
			return 0, false
		}
		for i := 0; i < len(oct); i++ {
			if oct[i] < '0' || oct[i] > '9' {
				return 0, false
			}
		}
		if oct != "0" && oct[0] == '0' {
			return 0, false
		}
		x, _ := strconv.Atoi(oct)
		if x > 255 {
			return 0, false
		}
		v = v<<8 | uint32(x)
	}
	if n != 4 {
		return 0, false
	}
	return v, true
}

// pyParseIPv6 is ipaddress.IPv6Address(s): the address and its scope id (hasScope false when absent).
func pyParseIPv6(s string) (addr [8]uint16, scope string, ok bool) {
	if strings.IndexByte(s, '/') >= 0 {
		return addr, "", false
	}
	a, sc, hasScope := strings.Cut(s, "%")
	if hasScope && (sc == "" || strings.IndexByte(sc, '%') >= 0) {
		return addr, "", false
	}
	if a == "" {
		return addr, "", false
	}
	parts := strings.Split(a, ":")
	if len(parts) < 3 {
		return addr, "", false
	}
	if strings.IndexByte(parts[len(parts)-1], '.') >= 0 {
		v4, ok4 := pyParseIPv4(parts[len(parts)-1])
		if !ok4 {
			return addr, "", false
		}
		parts = append(parts[:len(parts)-1], strconv.FormatUint(uint64(v4>>16), 16), strconv.FormatUint(uint64(v4&0xFFFF), 16))
	}
	if len(parts) > 9 {
		return addr, "", false
	}
	skip := -1
	for i := 1; i < len(parts)-1; i++ {
		if parts[i] == "" {
			if skip >= 0 {
				return addr, "", false
			}
			skip = i
		}
	}
	var hi, lo, skipped int
	if skip >= 0 {
		hi = skip
		lo = len(parts) - skip - 1
		if parts[0] == "" {
			hi--
			if hi != 0 {
				return addr, "", false
			}
		}
		if parts[len(parts)-1] == "" {
			lo--
			if lo != 0 {
				return addr, "", false
			}
		}
		skipped = 8 - (hi + lo)
		if skipped < 1 {
			return addr, "", false
		}
	} else {
		if len(parts) != 8 || parts[0] == "" || parts[len(parts)-1] == "" {
			return addr, "", false
		}
		hi = len(parts)
	}
	k := 0
	for i := 0; i < hi; i++ {
		h, okh := pyHextet(parts[i])
		if !okh {
			return addr, "", false
		}
		addr[k] = h
		k++
	}
	k += skipped
	for i := len(parts) - lo; i < len(parts); i++ {
		h, okh := pyHextet(parts[i])
		if !okh {
			return addr, "", false
		}
		addr[k] = h
		k++
	}
	return addr, sc, true
}

func pyHextet(s string) (uint16, bool) {
	if s == "" || len(s) > 4 {
		return 0, false
	}
	var v uint16
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}

// pyFormatIPv6 is str(IPv6Address): lower-case hextets, the longest run (first on ties, length > 1) of
// zero hextets compressed to "::", and "%scope" appended when there is one.
func pyFormatIPv6(addr [8]uint16, scope string) string {
	bestStart, bestLen, curStart, curLen := -1, 0, -1, 0
	for i, h := range addr {
		if h == 0 {
			curLen++
			if curStart < 0 {
				curStart = i
			}
			if curLen > bestLen {
				bestLen, bestStart = curLen, curStart
			}
		} else {
			curLen, curStart = 0, -1
		}
	}
	var b strings.Builder
	if bestLen > 1 {
		for i := 0; i < bestStart; i++ {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(strconv.FormatUint(uint64(addr[i]), 16))
		}
		b.WriteString("::")
		for i := bestStart + bestLen; i < 8; i++ {
			if i > bestStart+bestLen {
				b.WriteByte(':')
			}
			b.WriteString(strconv.FormatUint(uint64(addr[i]), 16))
		}
	} else {
		for i, h := range addr {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(strconv.FormatUint(uint64(h), 16))
		}
	}
	if scope != "" {
		b.WriteByte('%')
		b.WriteString(scope)
	}
	return b.String()
}

// pyCheckBracketedHost is urllib.parse._check_bracketed_host (Python 3.11.4+); upperV says whether a
// leading "V" also selects the IPvFuture branch (w3lib 2.x checks startswith(("v", "V"))).
func pyCheckBracketedHost(h string, upperV bool) bool {
	if strings.HasPrefix(h, "v") || (upperV && strings.HasPrefix(h, "V")) {
		return ipvFuture(h)
	}
	if _, ok := pyParseIPv4(h); ok {
		return false
	}
	_, _, ok := pyParseIPv6(h)
	return ok
}

// ipvFuture matches \Av[a-fA-F0-9]+\..+\Z (no newline can be present: they are removed before parsing).
func ipvFuture(h string) bool {
	if len(h) < 4 || h[0] != 'v' {
		return false
	}
	i := 1
	for i < len(h) && isHexDigit(h[i]) {
		i++
	}
	if i == 1 || i >= len(h) || h[i] != '.' {
		return false
	}
	return i+1 < len(h)
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
