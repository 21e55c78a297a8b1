#!/usr/bin/env python3
"""Property-run cases for identity/property_test.go: generated URLs with their live canonical forms and
Frontera fingerprints.

  .venv/oracle/bin/python oracle/gen_property.py --cases N --out .oracle/property.jsonl [--seed S]

URLs come from hypothesis (fixed seed, no example database, so a run is reproducible) with three
strategies, in turn:

  urls      hypothesis.provisional.urls(), the strategy w3lib's own tests/test_url.py uses
  text      arbitrary text (no lone surrogates: a Go string is UTF-8), as w3lib's st.text() | urls()
  hostile   a URL built from hostile parts: every percent-escape (%00-%FF, both cases, and broken ones),
            IDNA labels (Unicode letters, marks, full-width forms, ß/ς, xn-- labels), IPv4 in every number
            form, IPv6 (compressed, embedded IPv4, zone ids, brackets in the wrong places), dot segments
            (. .. %2e %2E%2e ... in every position), ports, userinfo, and query forms (blank values, "+",
            ";", repeated and unsorted keys, "=" inside values, escapes and Unicode)

For each URL and a drawn keep_blank_values / keep_fragments it records w3lib 2.5's canonicalize_url with
those options, w3lib 2.5's and w3lib 1.22's canonicalize_url with the defaults (1.22 in .venv/w3lib122, a
subprocess), and Frontera 0.8.1's sha1, md5 and hostname_local_fingerprint of the default canonical form
(what its UrlFingerprintMiddleware computes), each value or the exception raised. Then --requests Scrapy
requests (URL, method, body, headers given as str or bytes names, include_headers in other spellings,
keep_fragments, verbatim_url) with Scrapy 2.19's fingerprint() and the 2.6 request_fingerprint formula.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PCT = ["%%%02X" % b for b in range(256)] + ["%%%02x" % b for b in range(256)] + [
    "%", "%2", "%zz", "%G0", "%%", "%2%2F", "%25", "%252F", "%C3%A9", "%c3%a9", "%C3", "%E2%82", "%ED%A0%80",
    "%F0%9F%98%80", "%FF%FE", "%C0%AF"]
DOTS = [".", "..", "%2e", "%2E", "%2e%2e", "%2E%2e", ".%2e", "%2e.", "...", ".a", "a."]
UNI = ["\u00e9", "\u00df", "\u03c2", "\u0130", "\u0301", "\u200b", "\u200d", "\u00ad", "\uff21", "\uff0e",
       "\u3002", "\u2168", "\u00bd", "\u2075", "\u0663", "\u0645", "\u05d0", "\u4f8b", "\u30c6", "\U0001f600",
       "\ufeff", "\u2100", "\ufe6b", "\uff03", "\uff1f", "\uff0f", "\u1e9e", "\u1100", "\ud7a3", "\u0000"]
ASCII_SPECIAL = list(" !\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~\t\n\r\x01\x7f")


def strategies():
    from hypothesis import strategies as st
    from hypothesis.provisional import urls

    text_ch = st.characters(blacklist_categories=("Cs",))
    atom = st.one_of(
        st.sampled_from(PCT), st.sampled_from(DOTS), st.sampled_from(UNI), st.sampled_from(ASCII_SPECIAL),
        st.text(alphabet="abcXYZ019-_~", min_size=1, max_size=4), st.text(text_ch, max_size=2))
    chunk = st.lists(atom, max_size=5).map("".join)

    label = st.one_of(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCZ0123456789-_", min_size=1, max_size=8),
        st.lists(st.sampled_from(UNI + list("abcXY09-")), min_size=1, max_size=6).map("".join),
        st.sampled_from(["xn--nxasmq6b", "xn--ls8h", "xn--", "xn--a", "XN--BCHER-KVA", "www", "WWW", "localhost",
                         "m\u00fcnchen", "b\u00fccher", "fa\u00df", "\u03c3\u03bf\u03c2", "\u0441\u0430\u0439\u0442",
                         "\u4f8b\u3048", "\u2603", "a" * 63, "a" * 64, ""]),
        st.lists(st.sampled_from(PCT[:0x80] + list("ab")), min_size=1, max_size=3).map("".join))
    num = st.one_of(
        st.integers(0, 2 ** 33).map(str), st.integers(0, 2 ** 33).map(lambda n: "0x%x" % n),
        st.integers(0, 2 ** 33).map(lambda n: "0X%X" % n), st.integers(0, 2 ** 33).map(lambda n: "0%o" % n),
        st.sampled_from(["0", "00", "0x", "08", "09", "0xg", "1e3", "256", "4294967295", "4294967296"]))
    ipv4 = st.lists(num, min_size=1, max_size=5).map(".".join)
    h16 = st.integers(0, 0xFFFF).map(lambda n: "%x" % n)
    ipv6 = st.one_of(
        st.lists(h16, min_size=8, max_size=8).map(":".join),
        st.tuples(st.lists(h16, max_size=4), st.lists(h16, max_size=3)).map(lambda t: ":".join(t[0]) + "::" + ":".join(t[1])),
        st.tuples(st.lists(h16, max_size=3), ipv4).map(lambda t: ":".join(t[0]) + "::ffff:" + t[1]),
        st.sampled_from(["::", "::1", "::0:1", "0:0::0:1", "1::", "::ffff:1.2.3.4", "fe80::1%25eth0", "fe80::1%eth0",
                         "v1.abc", "V7.x:y", "1:2:3:4:5:6:7:8:9", "1:::2", "::1]", "[::1", "g::1", "2001:DB8::1"]))
    host = st.one_of(
        st.lists(label, min_size=1, max_size=4).map(".".join).flatmap(
            lambda h: st.sampled_from([h, h + ".", h.upper()])),
        ipv4, ipv6.map(lambda h: "[" + h + "]"), ipv6, st.text(text_ch, max_size=6))
    scheme = st.sampled_from(["http", "http", "https", "HTTP", "HtTpS", "ftp", "file", "ws", "mailto", "foo",
                              "svn+ssh", "a.b-c", "1http", ""])
    sep = st.sampled_from(["://", "://", "://", ":", ":/", ":///", ":\\\\", "//", ""])
    userinfo = st.one_of(st.just(""), st.tuples(chunk, st.one_of(st.just(None), chunk)).map(
        lambda t: t[0] + ("" if t[1] is None else ":" + t[1]) + "@"))
    port = st.one_of(st.just(""), st.integers(0, 70000).map(lambda n: ":%d" % n),
                     st.sampled_from([":", ":80", ":443", ":0080", ":abc", ":-1", ":\u0663", ":99999999999"]))
    segment = st.one_of(st.sampled_from(DOTS), chunk, st.sampled_from(["", ";p", ";a=b;c", "a;b"]))
    path = st.lists(segment, max_size=6).map(lambda s: "/" + "/".join(s) if s else "")
    qtok = st.one_of(chunk, st.sampled_from(["", "+", "a+b", "%20", "%2B", "=", "&", ";", "%26", "%3D", "\u00fc"]))
    pair = st.tuples(qtok, st.one_of(st.none(), qtok)).map(lambda t: t[0] if t[1] is None else t[0] + "=" + t[1])
    query = st.one_of(st.just(""), st.tuples(st.lists(pair, max_size=5), st.sampled_from(["&", "&", ";", "&&"])).map(
        lambda t: "?" + t[1].join(t[0])))
    frag = st.one_of(st.just(""), chunk.map(lambda s: "#" + s))
    ws = st.sampled_from(["", "", "", "", " ", "\t", "\n", "\x00", "\r\n", " \x1f"])
    hostile = st.tuples(ws, scheme, sep, userinfo, host, port, path, query, frag, ws).map("".join)
    return [("urls", urls()), ("text", st.text(text_ch, max_size=40)), ("hostile", hostile)]


HEADER_NAMES = ["Accept", "accept", "ACCEPT-LANGUAGE", "X-ID", "x-id", "Content-Type", "X-\u00dcn\u00ef", "\u00c4",
                "\u00e4", "x-\u00fcn", "X-\u20acN", "x-\u03c3\u03c2", "X-\u0130", "ǅx", "a_b", "1a", "x-\u00df"]


def request_strategy():
    """Scrapy requests: URLs from hypothesis' urls(), methods, bodies, header names in every case and
    script (str and bytes, as Scrapy stores each differently), include_headers in other spellings."""
    from hypothesis import strategies as st
    from hypothesis.provisional import urls

    name = st.sampled_from(HEADER_NAMES)
    spelling = lambda n: st.sampled_from([n, n.lower(), n.upper(), n.title()])  # noqa: E731

    @st.composite
    def request(draw):
        headers = draw(st.lists(st.tuples(name, st.booleans(), st.lists(st.binary(max_size=6), min_size=1, max_size=2)),
                                min_size=1, max_size=4))
        include = None
        if draw(st.integers(0, 3)) > 0:  # include_headers: mostly some of the request's names, respelled
            pool = [h[0] for h in headers] + HEADER_NAMES[:3]
            include = draw(st.lists(st.sampled_from(pool).flatmap(spelling), min_size=1, max_size=4))
        return {"url": draw(urls()), "method": draw(st.sampled_from(["GET", "POST", "PUT", "HEAD", "get", "DELETE"])),
                "body": draw(st.binary(max_size=8)), "headers": headers, "include_headers": include,
                "keep_fragments": draw(st.booleans()), "verbatim_url": draw(st.booleans())}

    return request()


def generate_requests(n, seed):
    from hypothesis import HealthCheck, given, settings, seed as hseed

    got = []

    @hseed(seed)
    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(request_strategy())
    def collect(d):
        got.append(d)

    collect()
    return got


def request_case(d):
    """The request as Scrapy builds and holds it, with its fingerprints (None if Scrapy refuses it)."""
    import base64

    from scrapy import Request
    from scrapy.utils.request import fingerprint

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from upstream_record import old_request_fingerprint

    hdrs = {}
    for n, as_bytes, vals in d["headers"]:
        hdrs[n.encode() if as_bytes else n] = vals
    try:
        r = Request(d["url"], method=d["method"], body=d["body"], headers=hdrs,
                    meta={"verbatim_url": True} if d["verbatim_url"] else {})
    except Exception:  # noqa: BLE001 - not a request Scrapy makes
        return None
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    c = {"strategy": "requests", "url": r.url, "method": r.method, "body": b64(r.body),
         "headers": [[b64(k), [b64(v) for v in r.headers.getlist(k)]] for k in r.headers.keys()],
         "include_headers": d["include_headers"], "keep_fragments": d["keep_fragments"],
         "verbatim_url": d["verbatim_url"]}
    c["scrapy"] = outcome(lambda: fingerprint(r, include_headers=d["include_headers"],
                                              keep_fragments=d["keep_fragments"]).hex())
    c["scrapy_2_6"] = outcome(old_request_fingerprint, r, include_headers=d["include_headers"],
                              keep_fragments=d["keep_fragments"])
    return c


def generate(n, seed):
    from hypothesis import HealthCheck, given, settings, seed as hseed, strategies as st

    def run(strat, seed, count, got, seen):
        @hseed(seed)
        @settings(max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(strat, st.booleans(), st.booleans())
        def collect(u, kb, kf):
            if (u, kb, kf) not in seen:  # distinct cases only: hypothesis repeats the simplest ones
                seen.add((u, kb, kf))
                got.append((u, kb, kf))

        collect()

    out = []
    strats = strategies()
    per = [n // len(strats) + (1 if i < n % len(strats) else 0) for i in range(len(strats))]
    for (name, strat), count in zip(strats, per):
        got, seen = [], set()
        s = seed
        # hypothesis may stop short of max_examples, and repeats are dropped; top up with the next seeds until the quota is met
        while len(got) < count:
            # each seed starts again from the simplest (already seen) examples: ask for enough beyond them
            run(strat, s, max(count - len(got), 100) + count // 10, got, seen)
            s += 1
        out.extend({"strategy": name, "url": u, "keep_blank_values": kb, "keep_fragments": kf}
                   for u, kb, kf in got[:count])
    return out


def outcome(fn, *a, **kw):
    try:
        v = fn(*a, **kw)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome Frontier must match
        return {"error": "%s: %s" % (type(e).__name__, e)}
    if isinstance(v, bytes):  # Frontera's fingerprints are hex, as str or bytes
        v = v.decode("ascii")
    return {"value": v}



def run_w3lib122():
    """In .venv/w3lib122: canonicalize_url (defaults) of each URL read as JSON from stdin."""
    import w3lib
    from w3lib.url import canonicalize_url

    urls = json.load(sys.stdin)
    json.dump({"w3lib": w3lib.__version__, "results": [outcome(canonicalize_url, u) for u in urls]}, sys.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--requests", type=int, default=1000, help="Scrapy requests (fingerprint, 2.6 formula)")
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--out", required=True)
    ap.add_argument("mode", nargs="?", default="gen")
    args = ap.parse_args()
    if args.mode == "w3lib122":
        run_w3lib122()
        return

    import w3lib.util

    # frontera 0.8.1 imports w3lib.util.to_native_str, which w3lib 2.x removed (see gen_fingerprints.py)
    if not hasattr(w3lib.util, "to_native_str"):
        w3lib.util.to_native_str = w3lib.util.to_unicode
    import w3lib
    from frontera.utils.fingerprint import hostname_local_fingerprint, md5, sha1
    from w3lib.url import canonicalize_url

    cases = generate(args.cases, args.seed)
    py122 = os.path.join(ROOT, ".venv", "w3lib122", "bin", "python")
    p = subprocess.run([py122, os.path.abspath(__file__), "--out", "-", "w3lib122"],
                       input=json.dumps([c["url"] for c in cases]).encode(), capture_output=True, check=True, cwd="/")
    r122 = json.loads(p.stdout)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps({"header": True, "seed": args.seed, "cases": len(cases), "w3lib25": w3lib.__version__,
                            "w3lib122": r122["w3lib"], "python": sys.version.split()[0]}) + "\n")
        for c, c122 in zip(cases, r122["results"]):
            u = c["url"]
            c["canon"] = outcome(canonicalize_url, u, keep_blank_values=c["keep_blank_values"],
                                 keep_fragments=c["keep_fragments"])
            d = outcome(canonicalize_url, u)
            c["canon_default"] = d
            c["canon_122"] = c122
            if "value" in d:
                key = d["value"]
                c["sha1"] = outcome(sha1, key)
                c["md5"] = outcome(md5, key)
                c["hostname_local"] = outcome(hostname_local_fingerprint, key)
            f.write(json.dumps(c, sort_keys=True) + "\n")
        nreq = 0
        for d in generate_requests(args.requests, args.seed):
            c = request_case(d)
            if c is not None:
                nreq += 1
                f.write(json.dumps(c, sort_keys=True) + "\n")
    print("wrote %d property cases and %d Scrapy requests to %s (seed %d)" % (len(cases), nreq, args.out, args.seed))


if __name__ == "__main__":
    main()
