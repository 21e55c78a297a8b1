#!/usr/bin/env python3
"""oracle/check_warc.py: validate WARC files with warcio, an independent reader (not Frontier's Go code).

Usage: .venv/oracle/bin/python oracle/check_warc.py [--names] PATH...   (files, or directories of *.warc.gz)

For every record, warcio parses the headers and the HTTP message and checks WARC-Block-Digest and
WARC-Payload-Digest (ArchiveIterator(check_digests=True), as `warcio check` does); warcio also refuses a gzip
member that holds more than one record. On top of that the script checks what Frontier's writer promises:
WARC/1.1, a warcinfo record first in each file with WARC-Filename equal to the file name, unique record ids,
parseable WARC-Dates, request/response Content-Types, a payload digest on every HTTP response, request and
metadata records concurrent to a response of the same file, one gzip member per record (counted independently
with zlib), and (with --names) the file name pattern prefix-YYYYMMDDhhmmssmmm-NNNNN-host.warc.gz.

Prints a JSON summary on stdout: files, records, records by type, responses (uri, status, payload bytes,
truncated), problems. Exit status 1 when there is any problem, 2 on bad usage.
"""
import json
import os
import re
import sys
import zlib
from datetime import datetime

import brotli
from warcio.archiveiterator import ArchiveIterator

NAME_RE = re.compile(r'^[A-Za-z0-9._]+(-[A-Za-z0-9._]+)*-\d{17}-\d{5}-[A-Za-z0-9._-]+\.warc\.gz$')


def gzip_members(path):
    """Count the gzip members of a file with zlib alone."""
    n = 0
    with open(path, 'rb') as f:
        data = f.read()
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        d.decompress(data)
        if not d.eof:
            raise ValueError('truncated gzip member')
        data = d.unused_data
        n += 1
    return n


def parse_date(s):
    if s.endswith('Z'):
        s = s[:-1] + '+00:00'
    return datetime.fromisoformat(s)


def check_file(path, summary, ids, check_names):
    problems = summary['problems']
    base = os.path.basename(path)

    def problem(msg):
        problems.append('%s: %s' % (base, msg))

    if check_names and not NAME_RE.match(base):
        problem('file name does not match prefix-timestamp-serial-host.warc.gz')
    records = 0
    responses_here = set()
    pending = []  # (record id, concurrent-to) of request/metadata records
    with open(path, 'rb') as f:
        it = ArchiveIterator(f, check_digests=True)
        try:
            for rec in it:
                h = rec.rec_headers
                rtype = h.get_header('WARC-Type')
                rid = h.get_header('WARC-Record-ID')
                where = 'record %d (%s %s)' % (records, rtype, rid)
                body = b''
                enc = (rec.http_headers.get_header('Content-Encoding') or '').strip().lower() if rec.http_headers else ''
                try:
                    if enc == 'br':
                        # warcio 1.8.1's brotli path calls Decompressor.unused_data, which the brotli module
                        # lacks: decode it here (the digests are still checked on the raw stream).
                        body = brotli.decompress(rec.raw_stream.read())
                    else:
                        body = rec.content_stream().read()
                except Exception as e:  # a body that its HTTP headers misdescribe
                    problem('%s: content does not decode as its HTTP headers say: %r' % (where, e))
                    rec.raw_stream.read()
                if rec.digest_checker.passed is False:
                    for p in rec.digest_checker.problems:
                        problem('%s: %s' % (where, p))
                if h.protocol != 'WARC/1.1':
                    problem('%s: version %s' % (where, h.protocol))
                if records == 0:
                    if rtype != 'warcinfo':
                        problem('first record is %s, not warcinfo' % rtype)
                    elif h.get_header('WARC-Filename') != base:
                        problem('warcinfo WARC-Filename %r' % h.get_header('WARC-Filename'))
                if not rid or not rid.startswith('<urn:uuid:') or not rid.endswith('>'):
                    problem('%s: record id is not <urn:uuid:...>' % where)
                if rid in ids:
                    problem('%s: duplicate record id' % where)
                ids.add(rid)
                try:
                    parse_date(h.get_header('WARC-Date') or '')
                except ValueError:
                    problem('%s: WARC-Date %r' % (where, h.get_header('WARC-Date')))
                ctype = h.get_header('Content-Type') or ''
                if rtype == 'response':
                    responses_here.add(rid)
                    if ctype.replace(' ', '') != 'application/http;msgtype=response':
                        problem('%s: Content-Type %r' % (where, ctype))
                    if not h.get_header('WARC-Payload-Digest'):
                        problem('%s: no WARC-Payload-Digest' % where)
                    elif rec.digest_checker.passed is not True:
                        problem('%s: digests were not checked' % where)
                    summary['responses'].append({
                        'uri': h.get_header('WARC-Target-URI'),
                        'status': int(rec.http_headers.get_statuscode()) if rec.http_headers else 0,
                        'payload_bytes': len(body),
                        'truncated': h.get_header('WARC-Truncated') or '',
                        'ip': h.get_header('WARC-IP-Address') or '',
                    })
                elif rtype == 'request':
                    if ctype.replace(' ', '') != 'application/http;msgtype=request':
                        problem('%s: Content-Type %r' % (where, ctype))
                if rtype in ('request', 'metadata'):
                    pending.append((where, h.get_header('WARC-Concurrent-To')))
                if not h.get_header('WARC-Block-Digest'):
                    problem('%s: no WARC-Block-Digest' % where)
                summary['by_type'][rtype] = summary['by_type'].get(rtype, 0) + 1
                records += 1
        except Exception as e:
            problem('warcio stopped after %d records: %s' % (records, str(e).strip()))
    for where, to in pending:
        if to not in responses_here:
            problem('%s: WARC-Concurrent-To %r names no response of this file' % (where, to))
    try:
        members = gzip_members(path)
        if members != records:
            problem('%d gzip members for %d records: want one member per record' % (members, records))
    except (ValueError, zlib.error) as e:
        problem('gzip: %s' % e)
    summary['records'] += records


def main(argv):
    check_names = False
    if argv and argv[0] == '--names':
        check_names, argv = True, argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    paths = []
    for a in argv:
        if os.path.isdir(a):
            paths += sorted(os.path.join(a, n) for n in os.listdir(a) if n.endswith('.warc.gz') or n.endswith('.warc'))
        else:
            paths.append(a)
    summary = {'files': len(paths), 'records': 0, 'by_type': {}, 'responses': [], 'problems': []}
    if not paths:
        summary['problems'].append('no WARC files found')
    ids = set()
    for p in paths:
        if not os.path.isfile(p):
            summary['problems'].append('%s: no such file' % p)
            continue
        check_file(p, summary, ids, check_names)
    json.dump(summary, sys.stdout, indent=1, sort_keys=True)
    print()
    return 1 if summary['problems'] else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
