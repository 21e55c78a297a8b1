package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

func htmlEscape(s string) string { return html.EscapeString(s) }

// PDFTrapPath is the path of a URL written in the text of host1's PDF. A crawler that parses PDFs for links
// would ask for it; the server answers 404, and tests can assert that nobody asked.
const PDFTrapPath = "/pdf-trap.html"

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// HTML returns the HTML of the page as the server sends it before any content encoding (nil for pages that are
// not HTML).
func (p *Page) HTML() []byte {
	switch p.kind {
	case kindHTML, kindSniffHTML:
	default:
		return nil
	}
	var b bytes.Buffer
	p.render(&b)
	return b.Bytes()
}

const filler = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. "

func (p *Page) render(b *bytes.Buffer) {
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	b.WriteString(html.EscapeString(p.title))
	b.WriteString("</title>\n")
	writeElems(b, p.head)
	b.WriteString("</head>\n")
	if p.frameset {
		b.WriteString("<frameset cols=\"50%,50%\">\n")
		writeElems(b, p.body)
		b.WriteString("</frameset></html>\n")
		return
	}
	b.WriteString("<body><h1 id=\"top\">")
	b.WriteString(html.EscapeString(p.title))
	b.WriteString("</h1>\n")
	writeElems(b, p.body)
	const tail = "</body></html>\n"
	if need := p.pad - b.Len() - len(tail); need > 0 {
		b.WriteString("<p>")
		for need > 0 {
			n := min(need, len(filler))
			b.WriteString(filler[:n])
			need -= n
		}
		b.WriteString("</p>\n")
	}
	b.WriteString(tail)
}

// writeElems writes each element's HTML on a line of its own.
func writeElems(b *bytes.Buffer, es []elem) {
	for _, e := range es {
		b.WriteString(e.html)
		b.WriteByte('\n')
	}
}

// accepts reports whether an Accept-Encoding header value accepts coding with a non-zero quality.
func accepts(header, coding string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), coding) {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

func (p *Page) serve(w http.ResponseWriter, r *http.Request) {
	if p.serveFailure(w) {
		return
	}
	hdr := w.Header()
	switch p.kind {
	case kindHTML, kindSniffHTML:
		b := bufPool.Get().(*bytes.Buffer)
		b.Reset()
		defer bufPool.Put(b)
		p.render(b)
		body := b.Bytes()
		if p.kind == kindSniffHTML {
			hdr["Content-Type"] = nil
		} else {
			hdr.Set("Content-Type", p.ContentType)
		}
		if p.Encoding != "" {
			hdr.Set("Vary", "Accept-Encoding")
			if accepts(r.Header.Get("Accept-Encoding"), p.Encoding) {
				var z bytes.Buffer
				var zw io.WriteCloser
				if p.Encoding == "gzip" {
					zw = gzip.NewWriter(&z)
				} else {
					zw = brotli.NewWriter(&z)
				}
				zw.Write(body)
				zw.Close()
				body = z.Bytes()
				hdr.Set("Content-Encoding", p.Encoding)
			}
		}
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(p.Status)
		w.Write(body)
	case kindRedirect:
		hdr.Set("Location", p.location)
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(p.Status)
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body><p>Moved to <a href=\"%s\">%s</a></p></body></html>\n", html.EscapeString(p.location), html.EscapeString(p.location))
	case kindError:
		if p.Status == http.StatusServiceUnavailable || p.Status == http.StatusTooManyRequests {
			hdr.Set("Retry-After", "1")
		}
		hdr.Set("Content-Type", p.ContentType)
		w.WriteHeader(p.Status)
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>%d</title></head><body><p>%s</p></body></html>\n", p.Status, html.EscapeString(p.title))
	case kindPDF, kindSniffPDF:
		body := pdfBody(p.host.Origin)
		if p.kind == kindSniffPDF {
			hdr["Content-Type"] = nil
		} else {
			hdr.Set("Content-Type", p.ContentType)
		}
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(p.Status)
		w.Write(body)
	case kindLarge:
		p.serveLarge(w, r)
	default:
		http.Error(w, "no such page", http.StatusNotFound)
	}
}

// largeChunk is what the large page repeats: HTML without links.
var largeChunk = func() []byte {
	var b bytes.Buffer
	for b.Len() < 64<<10-len(filler)-8 {
		b.WriteString("<p>" + filler + "</p>\n")
	}
	return b.Bytes()
}()

// serveLarge streams Config.LargeBytes of HTML from one shared chunk, so that the page is never held in memory.
func (p *Page) serveLarge(w http.ResponseWriter, r *http.Request) {
	size := p.host.site.cfg.LargeBytes
	w.Header().Set("Content-Type", p.ContentType)
	if !p.chunked {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	head := []byte("<!DOCTYPE html>\n<html><head><title>large</title></head><body>\n")
	var sent int64
	write := func(b []byte) bool {
		if rest := size - sent; int64(len(b)) > rest {
			b = b[:rest]
		}
		n, err := w.Write(b)
		sent += int64(n)
		return err == nil
	}
	if !write(head) {
		return
	}
	for sent < size {
		select {
		case <-p.host.site.stopping:
			return
		case <-r.Context().Done():
			return
		default:
		}
		if !write(largeChunk) {
			return
		}
	}
}

// pdfBody is a small PDF whose text names PDFTrapPath on the host.
func pdfBody(origin string) []byte {
	text := fmt.Sprintf("(See %s%s) Tj", origin, PDFTrapPath)
	stream := "BT /F1 12 Tf 72 712 Td " + text + " ET"
	return fmt.Appendf(nil, "%%PDF-1.4\n"+
		"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"+
		"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"+
		"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >> endobj\n"+
		"4 0 obj << /Length %d >> stream\n%s\nendstream endobj\n"+
		"trailer << /Root 1 0 R >>\n%%%%EOF\n", len(stream), stream)
}
