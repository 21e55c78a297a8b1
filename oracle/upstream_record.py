"""pytest plugin: record the identity calls an upstream test suite makes, with their live results.

Loaded by oracle/record.sh into the w3lib 2.5.0 and Scrapy 2.19.0 test suites (their source
distributions, unpacked by oracle/setup.sh) as `-p upstream_record`. It wraps, before the test modules
import them:

  w3lib.url.canonicalize_url          every call: its arguments and the string it returns or the exception
  scrapy.utils.request.fingerprint    every call: the request as Scrapy holds it (url, method, body, stored
                                      header names and values, meta verbatim_url), include_headers,
                                      keep_fragments, and the digest; beside it the Scrapy <= 2.6
                                      request_fingerprint formula on the same request and arguments

and appends one JSON object per call to $UPSTREAM_RECORD_OUT. identity/upstream_test.go replays each one
through Frontier's identity package. Only the outermost call is recorded (fingerprint's own
canonicalize_url call, or one made by the 2.6 formula, is not a call of the test).

Values are encoded so that nothing is lost on the way to Go: {"str": s} for a str that UTF-8 can encode,
{"bytes": base64} for bytes, and {"type": name, "repr": repr(v)} for anything else (a str with lone
surrogates has type "str-surrogates"). A ParseResult argument is recorded with "unparsed", the string
canonicalize_url makes of it first (w3lib.url._urlunparse), which is what Frontier is given.
"""

import base64
import functools
import hashlib
import inspect
import json
import os
from urllib.parse import ParseResult

_out = None
_suite = os.environ.get("UPSTREAM_SUITE", "")
_test = [""]
_depth = [0]


def enc(v):
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return {"type": "str-surrogates", "repr": repr(v)}
        return {"str": v}
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, (list, tuple)):
        return {"type": type(v).__name__, "items": [enc(x) for x in v], "repr": repr(v)}
    return {"type": type(v).__name__, "repr": repr(v)}


def _emit(rec):
    rec["suite"] = _suite
    rec["test"] = _test[0]
    _out.write(json.dumps(rec, sort_keys=True) + "\n")
    _out.flush()


def _outcome(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - every exception is an outcome to record
        return None, "%s: %s" % (type(e).__name__, e)


def _outer(record):
    """Decorator: call through, and record only the outermost call."""

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            _depth[0] += 1
            try:
                if _depth[0] > 1:
                    return fn(*args, **kwargs)
                return record(fn, *args, **kwargs)
            finally:
                _depth[0] -= 1

        wrapper.__signature__ = inspect.signature(fn)
        return wrapper

    return deco


def _record_canonicalize(fn, *args, **kwargs):
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    res, err = _outcome(fn, *args, **kwargs)
    url = a["url"]
    unparsed = None
    if isinstance(url, ParseResult):
        # what canonicalize_url does first with a ParseResult: Frontier is given that string
        import w3lib.url

        unparsed = enc(w3lib.url._urlunparse(*url))
    _emit(
        {
            "func": "canonicalize_url",
            "url": enc(url),
            "unparsed": unparsed,
            "keep_blank_values": bool(a["keep_blank_values"]),
            "keep_fragments": bool(a["keep_fragments"]),
            "encoding": enc(a["encoding"]),
            "query_separator": enc(a.get("query_separator", "&")),
            "result": enc(res),
            "error": err,
        }
    )
    if err is not None:
        # re-raise the real exception for the test
        return fn(*args, **kwargs)
    return res


def old_request_fingerprint(request, include_headers=None, keep_fragments=False):
    """Scrapy 2.6's request_fingerprint (scrapy/utils/request.py), removed in 2.12, without its cache."""
    from w3lib.url import canonicalize_url
    from scrapy.utils.python import to_bytes

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


def _request(r):
    from scrapy import Request

    if not isinstance(r, Request):
        return {"type": type(r).__name__, "repr": repr(r)}
    return {
        "type": "Request",
        "url": enc(r.url),
        "method": enc(r.method),
        "body": enc(r.body or b""),
        "headers": [[enc(k), [enc(v) for v in r.headers.getlist(k)]] for k in r.headers.keys()],
        "verbatim_url": bool(r.meta.get("verbatim_url")),
    }


def _record_fingerprint(fn, request, *args, **kwargs):
    bound = inspect.signature(fn).bind(request, *args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    inc = a["include_headers"]
    if inc is not None and not isinstance(inc, (list, tuple)):
        inc = list(inc)  # an iterable: materialise it once, for both calls
        kwargs["include_headers"] = inc
    rec = {
        "func": "fingerprint",
        "request": _request(request),
        "include_headers": enc(inc),
        "keep_fragments": bool(a["keep_fragments"]),
    }
    res, err = _outcome(fn, request, *args, **kwargs)
    rec["result"] = res.hex() if isinstance(res, bytes) else enc(res)
    rec["error"] = err
    res26, err26 = _outcome(old_request_fingerprint, request, include_headers=inc, keep_fragments=a["keep_fragments"])
    rec["result_2_6"], rec["error_2_6"] = res26, err26
    _emit(rec)
    if err is not None:
        return fn(request, *args, **kwargs)
    return res


def pytest_configure(config):
    global _out
    # No per-example deadline: on a loaded machine a slow example is not a failure of the suite.
    from hypothesis import settings

    settings.register_profile("upstream_record", deadline=None)
    settings.load_profile("upstream_record")
    _out = open(os.environ["UPSTREAM_RECORD_OUT"], "a", encoding="utf-8")
    import w3lib.url

    w3lib.url.canonicalize_url = _outer(_record_canonicalize)(w3lib.url.canonicalize_url)
    try:
        import scrapy.utils.request as sur
    except ImportError:
        return
    # scrapy.utils.request imported canonicalize_url by name: give it the wrapper too, so that its
    # nested call is seen as nested.
    sur.canonicalize_url = w3lib.url.canonicalize_url
    sur.fingerprint = _outer(_record_fingerprint)(sur.fingerprint)


def pytest_runtest_setup(item):
    _test[0] = item.nodeid


def pytest_unconfigure(config):
    if _out is not None:
        _out.close()
