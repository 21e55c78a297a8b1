"""warc/testdata/bench_warcio.py: the anchor for bench/results/warc.md: Python warcio writing the same
request/response/metadata exchanges as BenchmarkWriteExchange. Run: .venv/oracle/bin/python warc/testdata/bench_warcio.py"""
import io, os, random, time, resource, tempfile
from warcio.warcwriter import WARCWriter
from warcio.statusandheaders import StatusAndHeaders
words = ("the crawl frontier holds urls fetch page host robots delay queue score batch spider strategy worker kafka hbase "
         "partition offset link anchor title body html head meta canonical archive record").split()
rng = random.Random(1)
def body(n):
    out = ["<!DOCTYPE html><html><head><title>bench</title></head><body>\n"]; size = len(out[0])
    while size < n:
        w = ""
        if rng.randrange(12) == 0: w = '<a href="/d%d/page%d.html">' % (rng.randrange(4), rng.randrange(100000))
        w += rng.choice(words) + " "
        out.append(w); size += len(w)
    return "".join(out).encode()[:n]
for size in (16 << 10, 256 << 10):
    b = body(size)
    f = tempfile.NamedTemporaryFile(suffix=".warc.gz", delete=False)
    w = WARCWriter(f, gzip=True, warc_version="1.1")
    n = 0; raw = 0
    t0 = time.time(); c0 = resource.getrusage(resource.RUSAGE_SELF); c0 = c0.ru_utime + c0.ru_stime
    while time.time() - t0 < 3:
        req = w.create_warc_record("http://host1.test/p", "request", payload=io.BytesIO(b"GET /p HTTP/1.1\r\nHost: host1.test\r\nUser-Agent: x\r\n\r\n"),
            http_headers=None)
        hh = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(b)))], protocol="HTTP/1.1")
        resp = w.create_warc_record("http://host1.test/p", "response", payload=io.BytesIO(b), http_headers=hh)
        meta = w.create_warc_record("http://host1.test/p", "metadata", payload=io.BytesIO(b"fetchTimeMs: 1\r\noutlink: http://host1.test/ L a/@href\r\n"),
            warc_content_type="application/warc-fields")
        w.write_request_response_pair(req, resp); w.write_record(meta)
        n += 1; raw += len(b) + 150
    t = time.time() - t0; c1 = resource.getrusage(resource.RUSAGE_SELF); c = c1.ru_utime + c1.ru_stime - c0
    f.close(); sz = os.path.getsize(f.name); os.unlink(f.name)
    print("warcio body=%dKiB: %.1f MB/s wall, %.1f MB/cpu-s, %.0f records/s, ratio %.2f" % (size >> 10, raw / t / 1e6, raw / c / 1e6, 3 * n / t, raw / sz))
