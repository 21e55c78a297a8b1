#!/usr/bin/env python3
"""Generate the URL-canonicalisation oracle data for Frontier's root package.

Two jobs, both deterministic:

  gen_canon.py tables  [OUT]   writes identity/idna_tables.go: the Unicode data that w3lib's
                               canonicalize_url reaches through Python (stringprep for
                               IDNA 2003 nameprep, NFKC under Unicode 3.2 and under the
                               interpreter's Unicode 14, str.lower with Final_Sigma).
  gen_canon.py vectors [OUT]   writes identity/testdata/canon/vectors.json: >= 2,000 seeded URLs run
                               through w3lib 2.5.0 (.venv/oracle) and w3lib 1.22.0
                               (.venv/w3lib122), one subprocess per version.

Run from the repository root with the oracle interpreter:

  .venv/oracle/bin/python oracle/gen_canon.py tables
  .venv/oracle/bin/python oracle/gen_canon.py vectors

The tables are derived from Python's own behaviour (unicodedata.ucd_3_2_0, unicodedata,
stringprep, str.lower) rather than from the Unicode data files, so that Go reproduces the
interpreter, corrections and all, and not the Unicode standard in the abstract.
"""

import base64
import json
import os
import random
import stringprep
import subprocess
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------------------------
# tables

MAXCP = 0x110000


def is_surrogate(cp):
    return 0xD800 <= cp <= 0xDFFF


def is_hangul_syllable(cp):
    return 0xAC00 <= cp <= 0xD7A3


def ranges(pred):
    out = []
    start = None
    for cp in range(MAXCP + 1):
        ok = cp < MAXCP and not is_surrogate(cp) and pred(chr(cp))
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            out.append((start, cp - 1))
            start = None
    return ",".join("%X" % a if a == b else "%X-%X" % (a, b) for a, b in out)


def seq(s):
    return " ".join("%X" % ord(c) for c in s)


def norm_tables(ucd):
    nfkd = {}
    ccc = {}
    comp = []
    for cp in range(MAXCP):
        if is_surrogate(cp) or is_hangul_syllable(cp):
            continue
        c = chr(cp)
        d = ucd.normalize("NFKD", c)
        if d != c:
            nfkd[cp] = d
        k = ucd.combining(c)
        if k:
            ccc[cp] = k
        dec = ucd.decomposition(c)
        if dec and not dec.startswith("<"):
            parts = dec.split()
            if len(parts) == 2:
                a, b = chr(int(parts[0], 16)), chr(int(parts[1], 16))
                if ucd.normalize("NFC", a + b) == c:
                    comp.append((ord(a), ord(b), cp))
    return nfkd, ccc, comp


def ccc_ranges(ccc):
    out = []
    items = sorted(ccc.items())
    i = 0
    while i < len(items):
        a, k = items[i]
        b = a
        while i + 1 < len(items) and items[i + 1][0] == b + 1 and items[i + 1][1] == k:
            i += 1
            b = items[i][0]
        out.append(("%X" % a if a == b else "%X-%X" % (a, b)) + ":%d" % k)
        i += 1
    return ",".join(out)


def go_string(name, value, doc):
    lines = ["// %s" % doc, "const %s = \"\" +" % name]
    chunk = 100
    parts = [value[i:i + chunk] for i in range(0, len(value), chunk)] or [""]
    for i, p in enumerate(parts):
        lines.append("\t%s%s" % (json.dumps(p), " +" if i < len(parts) - 1 else ""))
    return "\n".join(lines) + "\n"


def gen_tables(out):
    b2 = {}
    for cp in range(MAXCP):
        if is_surrogate(cp):
            continue
        c = chr(cp)
        m = stringprep.map_table_b2(c)
        if m != c:
            b2[cp] = m

    def prohibited(c):
        return (stringprep.in_table_c12(c) or stringprep.in_table_c22(c) or stringprep.in_table_c3(c)
                or stringprep.in_table_c4(c) or stringprep.in_table_c5(c) or stringprep.in_table_c6(c)
                or stringprep.in_table_c7(c) or stringprep.in_table_c8(c) or stringprep.in_table_c9(c))

    nfkd14, ccc14, comp14 = norm_tables(unicodedata)
    nfkd32, ccc32, comp32 = norm_tables(unicodedata.ucd_3_2_0)

    lower = {}
    cased = set()
    ignorable = set()
    for cp in range(MAXCP):
        if is_surrogate(cp):
            continue
        c = chr(cp)
        lc = c.lower()
        if lc != c and cp != 0x3A3:
            lower[cp] = lc
        # Final_Sigma probes (see unicodeobject.c handle_capital_sigma): c is case-ignorable iff
        # a following cased letter changes the sigma; otherwise c is cased iff it ends the word.
        t1 = ("A\u03a3" + c).lower()[1]
        t2 = ("A\u03a3" + c + "B").lower()[1]
        if t1 != t2:
            ignorable.add(cp)
        elif (c + "\u03a3").lower()[-1] == "\u03c2":
            cased.add(cp)

    def mapping(d):
        return ";".join("%X:%s" % (k, seq(v)) for k, v in sorted(d.items()))

    nfkd32diff = {}
    for cp in set(nfkd14) | set(nfkd32):
        a, b = nfkd14.get(cp), nfkd32.get(cp)
        if a != b:
            nfkd32diff[cp] = b if b is not None else ""
    # No ccc table for 3.2: CPython's normalize() orders and blocks combining marks with the current
    # database's classes even under ucd_3_2_0 (unicodedata.c reads _getrecord_ex there), while
    # ucd_3_2_0.combining() reports the old ones.

    body = []
    body.append("// Code generated by oracle/gen_canon.py tables (Python %s, unicodedata %s, ucd_3_2_0); DO NOT EDIT.\n"
                % (sys.version.split()[0], unicodedata.unidata_version))
    body.append("\npackage identity\n\n")
    body.append(go_string("tabStringprepB1", ranges(stringprep.in_table_b1), "stringprep B.1 (mapped to nothing), code point ranges."))
    body.append(go_string("tabStringprepB2", mapping(b2), "stringprep B.2 (case folding for NFKC), cp:seq entries."))
    body.append(go_string("tabStringprepProhibited", ranges(prohibited), "stringprep C.1.2, C.2.2, C.3-C.9 (nameprep's prohibited output), ranges."))
    body.append(go_string("tabStringprepD1", ranges(stringprep.in_table_d1), "stringprep D.1 (RandALCat), ranges."))
    body.append(go_string("tabStringprepD2", ranges(stringprep.in_table_d2), "stringprep D.2 (LCat), ranges."))
    body.append(go_string("tabNFKD14", mapping(nfkd14), "full NFKD under unicodedata %s (Hangul excluded), cp:seq." % unicodedata.unidata_version))
    body.append(go_string("tabCCC14", ccc_ranges(ccc14), "canonical combining classes under unicodedata %s, range:class." % unicodedata.unidata_version))
    body.append(go_string("tabComp14", ";".join("%X %X:%X" % t for t in comp14), "primary composites under unicodedata %s, a b:c." % unicodedata.unidata_version))
    body.append(go_string("tabNFKD32Diff", ";".join("%X:%s" % (k, seq(v)) for k, v in sorted(nfkd32diff.items())), "NFKD under ucd_3_2_0 where it differs from tabNFKD14 (empty: no decomposition)."))
    body.append(go_string("tabComp32", ";".join("%X %X:%X" % t for t in comp32), "primary composites under ucd_3_2_0, a b:c."))
    body.append(go_string("tabLower", mapping(lower), "Python str.lower() per code point where it changes (U+03A3 is contextual, handled in code)."))
    body.append(go_string("tabCased", ranges(lambda c: ord(c) in cased), "code points that are cased and not case-ignorable (Python's Final_Sigma test)."))
    body.append(go_string("tabCaseIgnorable", ranges(lambda c: ord(c) in ignorable), "case-ignorable code points (Python's Final_Sigma test)."))
    with open(out, "w") as f:
        f.write("".join(body))
    subprocess.run(["gofmt", "-w", out], check=True)
    print("wrote", out, file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# vectors

SCHEMES = ["http", "http", "http", "https", "HTTP", "HtTpS", "ftp", "file", "ws", "wss", "foo", "svn+ssh",
           "tel", "mailto", "a.b-c"]
USERINFO = ["", "", "", "", "user@", "User:Pass@", "u%40x:p%3Ad@", "\u00fcser:p\u00e4ss@", "@", ":@", "a:b:c@",
            "us er@", "USER:@", "a%2Bb:c;d=e@", "x@y@"]
HOSTS = ["example.com", "example.com", "www.example.com", "WWW.Example.COM", "www.ex\u00e4mple.com",
         "\u041c\u041e\u0421\u041a\u0412\u0410.\u0440\u0444", "b\u00fccher.de", "BÜCHER.DE",
         "\u4f8b\u3048.\u30c6\u30b9\u30c8", "xn--nxasmq6b.com", "\u0391\u03a3.gr", "\u03bf\u03c3\u03a3.gr",
         "stra\u00dfe.de", "192.168.0.1", "[::1]", "[2001:DB8:0:0:0:0:0:1]", "[::ffff:1.2.3.4]", "[fe80::1%25eth0]",
         "[v1.abc]", "[0:0::0:1]", "[2001:db8::0:1:0:0:1]", "a..b", ".example.com", "example.com.", "x" * 64 + ".com",
         "\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com", "\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45\uff61com",
         "\u65e5\u672c\u3002jp", "\u0645\u062b\u0627\u0644.\u0625\u062e\u062a\u0628\u0627\u0631",
         "a\u0645\u062b\u0627\u0644.com", "\u2603.net", "\u00df.de", "\U0001f4a9.la", "ex\u00adample.com",
         "ex\u200bample.com", "xn--ls8h.la", "\u0130stanbul.tr", "a%41b.com", "EXAMPLE.COM", "localhost",
         "\u00e9" * 70 + ".com", "xn--\u00e9.com", "\u0663\u0664.com", "caf\u00e9.\u00c9cole.fr",
         "\u1e9e.de", "\u2168.com", "\u00bd.com", "\u1100\u1161\u11a8.kr", "a\u0301.com", "\u2075.com"]
PORTS = ["", "", "", "", ":80", ":443", ":8080", ":", ":0080", ":65535", ":65536", ":abc", ":-1",
         ":\u0663", ":99999999999", ":21"]
PATHS = ["", "", "/", "/", "/a/b", "/a/b/", "/index.html", "/a%7eb/%2fc%3F/%41", "/a b", "/\u00e4/\u00f6",
         "/%E9", "/%zz", "/%", "/%2", "/a/./b/../c", "/../x", "/.", "/a/..", "/p;params", "/p;a=b;c",
         "/a;x/b;y", "/%23x", "/%25", "/%2541", "/%3b", "/%3B", "/a|b", "/[x]", "/'quote'", '/"q"', "/<>{}^`",
         "/a\\b", "/%C3%A9", "/%c3%a9", "/~user", "/%7E", "/\U0001f600", "/\x7f", "//double", "/a%2Fb",
         "/%2e%2e/x", "/a/%2E/b", "/a/%2e%2e/b", "/a/.../b", "/a//b/../c", "/%252F", "/%%2F", "/%2%2F",
         "/a@b:c", "/a+b", "/a%20b", "/a%2Bb", "/a,b$c!d*e(f)", "relative", "/\u00e9t\u00e9", "/%FF%FE"]
QUERIES = ["", "", "", "?", "?a=1&b=2", "?b=2&a=1", "?a=1;b=2", "?q=%7e&z&b=a+b;c=d", "?x=\u00e9", "?c=%E9",
           "?a=&b", "?a=1&a=0&a=1", "?=v", "?&&", "?a+b=c+d", "?a%20b=c%2Bd", "?k=v=w", "?%zz=1",
           "?cl4url=top.rbc.ru/politics/14/07/2015/55a50b509a79473f583e104c&lang=ru&lr=54", "?\u00fc=\u00f6",
           "?a='b'", "?a[]=1&a[]=2", "?a=%26&b=%3D", "?x=%FF%FE", "?;;a;", "?a=\x01", "?b&a", "?B=1&a=1",
           "?a=%2f%3f", "?%E9=%e9", "?a=1&", "?a b=c d", "?x=%", "?x=%4", "?x=a|b", "?x={y}", "?x=\\y",
           "?utm_source=x&id=5", "?a=1;a=2", "?a=%3B&b=;", "?\u00e9", "?x=%C3%A9%C3"]
FRAGS = ["", "", "", "", "#", "#frag", "#a b", "#!ajax", "#%41", "#\u00fc", "#a?b", "#a#b"]

FIXED = [
    "HTTP://WWW.Example.COM:80/a%7eb/%2fc%3F/%41?q=%7e&z&b=a+b;c=d#frag",
    "http://user:PASS@Example.com:/p;params?x=1",
    "http://www.ex\u00e4mple.com/",
    "http://x.com/?c=%E9",
    "http://x.com?x=\u00e9",
    "http://www.example.com",
    "http://www.example.com/do?c=3&b=5&b=2&a=50",
    "http://www.example.com/r\u00e9sum\u00e9",
    "https://news.yandex.ru/yandsearch?cl4url=top.rbc.ru/politics/14/07/2015/55a50b509a79473f583e104c&lang=ru&lr=54#fragment",
    "", " ", "not a url", "http://[::1/", "http://a]b/", "http://[1.2.3.4]/", "http://[v1.x]/", "http://[V1.x]/",
    "http://[::1]x/", "http://a\u2100b.com/", "http://[fe80::1%25]/", "http://[fe80::1%eth0]/",
    "//example.com/a", "/relative/path?b=1&a=2", "?x=1", "#f", "mailto:Someone@Example.com",
    "javascript:alert(1)", "data:text/html,<b>x</b>", "http:/x", "http:x", "http:", "http://", "http:///a",
    "HTTP:\\\\example.com\\a\\b?c\\d#e\\f", "http://example.com\\@evil.com/", "  http://example.com/  ",
    "\t\nhttp://exa\tmple.com/a\nb\r", "\x00http://example.com/\x00", "http://example.com/\x01\x1f",
    "http://a.com:80:80/", "http://a.com/?a=1#b=2", "http://[::1]:8080/", "http://[::1]:/",
    "http://[::1]:x/", "http://u@[::1]/", "http://[u]@host/", "http://v[u]@vhost/", "HTTP://[V1.ab]/",
    "http://[v1.\u00e9]/", "http://[v1.\u00e9:]/", "ftp://ftp.example.com/pub;type=a", "tel:+1-555;ext=1",
    "foo://host/a/../b", "foo:/a/../b", "mailto:a/../b", "http://example.com/a%2F..%2Fb", "1http://x.com/",
    "http://\uff21\uff0f\uff22.com/", "http://a\uff03b.com/", "http://a\uff1fb/", "http://a\ufe6bb/",
    "http://example.com:0/", "http://%zz.com/", "http://ex%41mple.com/", "http://a b.com/",
    "http://\u00e9\u00e9.com:8080/x?y#z", "http://example.com/?q=a%2Bb+c", "https://example.com:443/",
    "ws://Example.com:80/chat", "file:///C:/a/b", "file://localhost/etc/passwd", "http://a.com?b",
    "https://a.com?b=c'd", "foo://a.com?b=c'd", "http://a.com/%7e%7E~", "http://a.com/%41%42%43",
]


def gen_inputs(n, seed=20261122):
    rnd = random.Random(seed)
    out = []
    seen = set()

    def add(u, as_bytes=False):
        key = (u, as_bytes)
        if key not in seen:
            seen.add(key)
            out.append((u, as_bytes))

    for u in FIXED:
        add(u)
    # every byte value, escaped, in the path and in the query
    for b in range(256):
        add("http://example.com/x%%%02Xy?k%%%02x=v%%%02X" % (b, b, b))
    # every printable ASCII byte raw, in the path, in the query and in the userinfo
    for b in range(0x20, 0x7F):
        c = chr(b)
        add("http://example.com/p" + c + "q?a" + c + "b=c" + c + "d")
        add("http://u" + c + "v@example.com/")
    # invalid UTF-8 (bytes input)
    for raw in [b"http://x.com/\xff", b"http://x.com/?q=\xe9", b"http://\xc3\xa9x.com/", b"http://x.com/\xe2\x82",
                b"http://x.com/\xed\xa0\x80", b"http://x.com/a\xc0\xafb", b"http://x.com/#\xfe", b"\xffhttp://x.com/"]:
        add(raw.decode("latin-1"), True)
    while len(out) < n:
        parts = [rnd.choice(SCHEMES) + "://" if rnd.random() < 0.95 else rnd.choice(["", "//", "http:", "HTTP:/"])]
        parts.append(rnd.choice(USERINFO))
        parts.append(rnd.choice(HOSTS))
        parts.append(rnd.choice(PORTS))
        np = rnd.choice([1, 1, 1, 2, 3])
        path = "".join(rnd.choice(PATHS) for _ in range(np))
        if path and not path.startswith("/"):
            path = "/" + path
        parts.append(path)
        q = rnd.choice(QUERIES)
        if rnd.random() < 0.3:
            q += "&" + rnd.choice(QUERIES).lstrip("?")
        parts.append(q)
        parts.append(rnd.choice(FRAGS))
        u = "".join(parts)
        r = rnd.random()
        if r < 0.03:
            u = rnd.choice([" ", "\t", "\x00 ", "\n"]) + u + rnd.choice(["", " ", "\r\n", "\x1f"])
        elif r < 0.05:
            i = rnd.randrange(len(u) + 1)
            u = u[:i] + rnd.choice(["\t", "\n", "\r"]) + u[i:]
        add(u)
    return out


def run_w3lib():
    import w3lib
    from w3lib.url import canonicalize_url
    items = json.load(sys.stdin)
    res = []
    for it in items:
        u = base64.b64decode(it["b64"]) if "b64" in it else it["in"]
        r = {}
        for name, kw in (("", {}), ("_frag", {"keep_fragments": True}), ("_noblank", {"keep_blank_values": False})):
            try:
                r["out" + name] = canonicalize_url(u, **kw)
            except Exception as e:  # w3lib raised: the Go side must return an error
                r["err" + name] = "%s: %s" % (type(e).__name__, e)
        res.append(r)
    json.dump({"w3lib": w3lib.__version__, "python": sys.version.split()[0], "results": res}, sys.stdout)


def gen_vectors(out):
    inputs = gen_inputs(2600)
    items = []
    for u, as_bytes in inputs:
        if as_bytes:
            items.append({"in": u.encode("latin-1").decode("utf-8", "replace"), "b64": base64.b64encode(u.encode("latin-1")).decode()})
        else:
            items.append({"in": u})
    runs = {}
    for mode, venv in (("w3lib25", ".venv/oracle"), ("w3lib122", ".venv/w3lib122")):
        py = os.path.join(ROOT, venv, "bin", "python")
        p = subprocess.run([py, os.path.abspath(__file__), "run"], input=json.dumps(items).encode(),
                           capture_output=True, check=True, cwd="/")
        runs[mode] = json.loads(p.stdout)
    vectors = []
    for i, it in enumerate(items):
        v = dict(it)
        for mode in runs:
            r = runs[mode]["results"][i]
            for k, val in r.items():
                v[mode + "_" + k] = val
        vectors.append(v)
    doc = {
        "generator": "oracle/gen_canon.py vectors (seed 20261122)",
        "python": runs["w3lib25"]["python"],
        "w3lib25_version": runs["w3lib25"]["w3lib"],
        "w3lib122_version": runs["w3lib122"]["w3lib"],
        "note": "in is the input URL (b64: the raw bytes when they are not UTF-8); <mode>_out is canonicalize_url(in), "
                "<mode>_out_frag with keep_fragments=True, <mode>_out_noblank with keep_blank_values=False; "
                "<mode>_err* when w3lib raised.",
        "vectors": vectors,
    }
    with open(out, "w") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("wrote %d vectors to %s" % (len(vectors), out), file=sys.stderr)
    gen_unicode_vectors(os.path.join(os.path.dirname(out), "unicode.json"))
    write_fuzz_seeds([it["in"] for it in items if "b64" not in it])


def go_quote(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def write_fuzz_seeds(inputs, n=120, seed=99):
    """Seed corpora for FuzzCanonicalize and FuzzCanonResolve under testdata/fuzz/ (Go's corpus format)."""
    rnd = random.Random(seed)
    picks = inputs[:40] + rnd.sample(inputs[40:], min(n - 40, len(inputs) - 40))
    for name in ("FuzzCanonicalize", "FuzzCanonResolve"):
        d = os.path.join(ROOT, "identity", "testdata", "fuzz", name)
        os.makedirs(d, exist_ok=True)
        for i, u in enumerate(picks):
            if name == "FuzzCanonicalize":
                body = "go test fuzz v1\nstring(%s)\n" % go_quote(u)
            else:
                base = rnd.choice(["", "http://example.com/a/b/c?q#f", "https://Ex\u00e4mple.com:443/x/"])
                body = "go test fuzz v1\nstring(%s)\nstring(%s)\n" % (go_quote(base), go_quote(u))
            with open(os.path.join(d, "seed-%03d" % i), "w") as f:
                f.write(body)


# Code point pools for the Unicode unit vectors: scripts, compatibility forms, combining marks, dots,
# prohibited and bidi characters, and code points assigned after Unicode 3.2.
UNI_POOLS = [
    (0x41, 0x7A), (0xC0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x5FF),
    (0x600, 0x6FF), (0x900, 0x97F), (0x1100, 0x11FF), (0x1E00, 0x1EFF), (0x1F00, 0x1FFF), (0x2000, 0x206F),
    (0x2100, 0x218F), (0x2460, 0x24FF), (0x3000, 0x303F), (0x3040, 0x30FF), (0xAC00, 0xAC40), (0xFB00, 0xFB4F),
    (0xFE00, 0xFE6F), (0xFF00, 0xFFEF), (0x1D400, 0x1D4FF), (0x1F300, 0x1F64F), (0x1E030, 0x1E06D),
    (0x10780, 0x107BA), (0xE0000, 0xE007F), (0x2E80, 0x2EFF), (0x0, 0x40)]


def gen_unicode_vectors(out, n=4000, seed=7):
    rnd = random.Random(seed)
    vec = []
    for i in range(n):
        k = rnd.choice([1, 1, 2, 3, 5, 8])
        chars = []
        for _ in range(k):
            lo, hi = rnd.choice(UNI_POOLS)
            cp = rnd.randint(lo, hi)
            if 0xD800 <= cp <= 0xDFFF:
                cp = 0x41
            chars.append(chr(cp))
        if rnd.random() < 0.3:
            chars.insert(rnd.randrange(len(chars) + 1), rnd.choice([".", "\u3002", "\uff0e", "\uff61", "\u03a3"]))
        t = "".join(chars)
        v = {"s": t, "nfkc14": unicodedata.normalize("NFKC", t), "nfkc32": unicodedata.ucd_3_2_0.normalize("NFKC", t),
             "lower": t.lower()}
        try:
            v["idna"] = t.encode("idna").decode("ascii")
        except UnicodeError as e:
            v["idna_err"] = str(e)
        vec.append(v)
    with open(out, "w") as f:
        json.dump({"generator": "oracle/gen_canon.py vectors (unicode, seed 7)", "python": sys.version.split()[0],
                   "unidata_version": unicodedata.unidata_version, "vectors": vec}, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("wrote %d unicode vectors to %s" % (len(vec), out), file=sys.stderr)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "tables":
        gen_tables(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "identity", "idna_tables.go"))
    elif cmd == "vectors":
        gen_vectors(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "identity", "testdata", "canon", "vectors.json"))
    elif cmd == "run":  # internal: canonicalise the inputs on stdin with the w3lib this interpreter has
        run_w3lib()
    else:
        sys.exit("usage: gen_canon.py tables|vectors [OUT]")
