#!/usr/bin/env python3
"""Generate fingerprint vectors for Frontier's root package from the real packages.

  .venv/oracle/bin/python oracle/gen_fingerprints.py [OUT]   (default identity/testdata/fingerprint/vectors.json)

Inputs are the URLs of identity/testdata/canon/vectors.json (run oracle/gen_canon.py vectors first) plus a few
fixed keys. For each it records:

  keys:     frontera.utils.fingerprint.sha1 / md5 / hostname_local_fingerprint of the key (hex, as Frontera
            returns it), for raw inputs and for their canonical forms under both w3lib versions;
  domains:  Frontera's DomainMiddleware info (parse_domain_from_url_fast + to_bytes) of the raw URL and the
            DomainFingerprintMiddleware sha1 of its name, or the exception Frontera raises;
  scrapy:   scrapy.utils.request.fingerprint (Scrapy 2.19, the "2.7" form) of scrapy.Request objects with
            varied methods, bodies, headers, include_headers and keep_fragments, and the <= 2.6
            request_fingerprint. Scrapy 2.19 no longer ships request_fingerprint (removed in 2.12), so
            old_request_fingerprint below implements its documented formula (Scrapy 2.6
            scrapy/utils/request.py): sha1(method + canonicalize_url(url, keep_fragments) + body + for each
            header in sorted(include_headers), lower-cased, if present: name + each value), hex digest.
            The Go side receives request.url, i.e. the URL after Scrapy's safe_url_string.
"""

import base64
import hashlib
import json
import os
import random
import sys

import w3lib.util

# Shim: frontera 0.8.1 imports w3lib.util.to_native_str, which w3lib 2.x removed; on Python 3 it is
# to_unicode (the same alias oracle/gen_partitions.py makes). parse_url's to_native_str(url) is then the
# identity on str, as in Frontera's era.
if not hasattr(w3lib.util, "to_native_str"):
    w3lib.util.to_native_str = w3lib.util.to_unicode

import frontera  # noqa: E402
import scrapy  # noqa: E402
import w3lib
from frontera.utils.fingerprint import hostname_local_fingerprint, md5, sha1  # noqa: E402
from frontera.utils.url import parse_domain_from_url_fast  # noqa: E402
from scrapy import Request  # noqa: E402
from scrapy.utils.request import fingerprint  # noqa: E402
from w3lib.url import canonicalize_url  # noqa: E402
from w3lib.util import to_bytes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def old_request_fingerprint(request, include_headers=None, keep_fragments=False):
    if include_headers:
        include_headers = tuple(to_bytes(h.lower()) for h in sorted(include_headers))
    fp = hashlib.sha1()
    fp.update(to_bytes(request.method))
    fp.update(to_bytes(canonicalize_url(request.url, keep_fragments=keep_fragments)))
    fp.update(request.body or b"")
    if include_headers:
        for hdr in include_headers:
            if hdr in request.headers:
                fp.update(hdr)
                for v in request.headers.getlist(hdr):
                    fp.update(v)
    return fp.hexdigest()


def domain_info(url):
    netloc, name, scheme, sld, tld, subdomain = parse_domain_from_url_fast(url)
    return {
        "netloc": to_bytes(netloc).decode("utf-8", "surrogateescape"),
        "name": to_bytes(name).decode("utf-8", "surrogateescape"),
        "scheme": to_bytes(scheme).decode(),
        "sld": to_bytes(sld).decode(),
        "tld": to_bytes(tld).decode(),
        "subdomain": to_bytes(subdomain).decode(),
    }


def main(out):
    with open(os.path.join(ROOT, "identity", "testdata", "canon", "vectors.json")) as f:
        canon = json.load(f)["vectors"]
    urls = [v["in"] for v in canon if "b64" not in v]

    keys = ["TestString", "", "http://www.example.com/", "www.example.com",
            "https://news.yandex.ru/yandsearch?cl4url=top.rbc.ru/politics/14/07/2015/55a50b509a79473f583e104c&lang=ru&lr=54#fragment"]
    for v in canon:
        if "b64" in v:
            continue
        keys.append(v["in"])
        for k in ("w3lib25_out", "w3lib122_out", "w3lib25_out_frag"):
            if k in v:
                keys.append(v[k])
    seen = set()
    kv = []
    for k in keys:
        if k in seen:
            continue
        seen.add(k)
        r = {"key": k, "sha1": sha1(k).decode(), "md5": md5(k).decode()}
        try:
            r["hostname_local"] = hostname_local_fingerprint(k).decode()
        except Exception as e:  # urlparse raised: the Go side returns an error
            r["hostname_local_err"] = "%s: %s" % (type(e).__name__, e)
        kv.append(r)

    dom = []
    for u in urls:
        d = {"url": u}
        try:
            info = domain_info(u)
            d["domain"] = info
            d["fingerprint"] = sha1(info["name"]).decode()
        except Exception as e:  # Frontera raises: the Go side returns an error
            d["err"] = "%s: %s" % (type(e).__name__, e)
        dom.append(d)

    rnd = random.Random(1234)
    header_pool = [("Accept", [b"text/html"]), ("X-Token", [b"abc", b"def"]), ("Cookie", [b"a=1"]),
                   ("Accept-Language", [b"en", "fr-\u00e9".encode()]), ("X-Bin", [b"\x00\xff"])]
    sc = []
    for u in urls:
        if rnd.random() > 0.5:
            continue
        method = rnd.choice(["GET", "GET", "POST", "PUT", "HEAD", "get"])
        body = rnd.choice([b"", b"", b"a=1&b=2", "\u00e9t\u00e9".encode(), b"\x00\x01\xff"])
        headers = dict(rnd.sample(header_pool, rnd.randint(0, 3)))
        include = rnd.choice([None, None, ["Accept"], ["X-Token", "accept"], ["cookie", "Missing", "X-Bin"],
                              ["B-Missing", "Accept-Language", "a-missing"]])
        keep = rnd.random() < 0.3
        verbatim = rnd.random() < 0.1
        try:
            req = Request(u, method=method, body=body, headers=headers, meta={"verbatim_url": True} if verbatim else {})
        except Exception:
            continue
        rec = {"url": req.url, "method": req.method, "body_b64": base64.b64encode(req.body).decode(),
               "headers": [[k.decode(), [base64.b64encode(x).decode() for x in req.headers.getlist(k)]]
                           for k in req.headers.keys()],
               "include_headers": include, "keep_fragments": keep, "verbatim_url": verbatim}
        try:
            rec["fingerprint"] = fingerprint(req, include_headers=include, keep_fragments=keep).hex()
        except Exception as e:
            rec["fingerprint_err"] = "%s: %s" % (type(e).__name__, e)
        if not verbatim:
            try:
                rec["fingerprint_2_6"] = old_request_fingerprint(req, include_headers=include, keep_fragments=keep)
            except Exception as e:
                rec["fingerprint_2_6_err"] = "%s: %s" % (type(e).__name__, e)
        sc.append(rec)

    doc = {
        "generator": "oracle/gen_fingerprints.py",
        "python": sys.version.split()[0],
        "frontera_version": frontera.__version__ if hasattr(frontera, "__version__") else "0.8.1",
        "scrapy_version": scrapy.__version__,
        "w3lib_version": w3lib.__version__,
        "note": "keys: Frontera's fingerprint functions (hex). domains: DomainMiddleware info + sha1(name). "
                "scrapy: fingerprint() of Scrapy %s (hex of the raw digest) and the <=2.6 request_fingerprint "
                "formula implemented in this script (Scrapy no longer ships it)." % scrapy.__version__,
        "keys": kv,
        "domains": dom,
        "scrapy": sc,
    }
    with open(out, "w") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("wrote %d keys, %d domains, %d scrapy requests to %s" % (len(kv), len(dom), len(sc), out), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "identity", "testdata", "fingerprint", "vectors.json"))
