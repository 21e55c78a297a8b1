package web

import (
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
)

// Outcome is what a correct, polite crawler sees when it asks for a URL of the site.
type Outcome string

// The outcomes a page can have.
const (
	OK               Outcome = "ok"                 // 2xx with a body (HTML or not)
	Redirect         Outcome = "redirect"           // 3xx; Page.Location is the (normalised) target
	HTTPError        Outcome = "http_error"         // 4xx or 5xx
	Large            Outcome = "large"              // 200 with a body of Config.LargeBytes: a crawler truncates it
	RobotsDisallowed Outcome = "robots_disallowed"  // robots.txt forbids it: a polite crawler never asks
	NoResponse       Outcome = "no_response"        // the connection is accepted and never answered: a timeout
	DNSError         Outcome = "dns_error"          // the host name does not resolve
	Refused          Outcome = "connection_refused" // nothing listens at the address
)

// Page is one URL of the site with what it answers. Pages are built once by Start and never change: read them,
// do not modify them.
type Page struct {
	// URL is the normalised URL (see Normalize): the key of the page in the graph.
	URL string
	// Host is the host part of URL (hostN.test, or IP:port with Config.UseIPs).
	Host string
	// Status is the HTTP status the server answers; 0 when it gives no HTTP answer.
	Status int
	// Location is the normalised target of a redirect.
	Location string
	// ContentType is the Content-Type header served ("" when the header is left out on purpose, for sniffing).
	ContentType string
	// Encoding is the Content-Encoding served to a client that accepts it ("gzip" or "br"), else "".
	Encoding string
	// Links are the normalised targets of the followable links (a, area, link rel=canonical|alternate, frame,
	// iframe) in document order, without duplicates. Links to non-HTTP schemes, stylesheets, scripts and
	// images are not in it: a crawler must not follow them.
	Links []string
	// Nofollow are the targets that the page links only with rel=nofollow.
	Nofollow []string
	// Outcome is what a crawler that obeys robots.txt as the generic agent "*" sees.
	Outcome Outcome

	host     *Host
	key      string // escaped path?query: what the host routes by
	title    string
	head     []elem
	body     []elem
	frameset bool
	kind     pageKind
	location string // the raw Location header of a redirect
	chunked  bool   // large page sent without Content-Length
	slow     bool   // waits Timing.LatencyMax more than its host (Timing.SlowPages)
	pad      int

	// Transient failures (Config.Hostile.Failing): the first failN requests answer failStatus.
	failN      int
	failStatus int
	requests   atomic.Int64
}

type pageKind int

const (
	kindHTML pageKind = iota
	kindRedirect
	kindError
	kindPDF
	kindLarge
	kindSniffHTML // HTML without a Content-Type header
	kindSniffPDF  // PDF without a Content-Type header
	kindNone      // no HTTP answer (blackhole, refused, nxdomain)
)

// elem is one piece of HTML; target is the normalised URL a crawler must follow from it ("" for none).
type elem struct {
	html     string
	target   string
	nofollow bool
}

// graph is the whole site: every page by normalised URL.
type graph struct {
	pages map[string]*Page
}

func (g *graph) add(h *Host, key string, kind pageKind, status int) *Page {
	u := h.Origin + key
	if _, dup := g.pages[u]; dup {
		panic(fmt.Sprintf("web: page %s built twice", u))
	}
	p := &Page{URL: u, Host: h.host, Status: status, host: h, key: key, kind: kind}
	switch kind {
	case kindHTML, kindError, kindRedirect:
		p.ContentType = "text/html; charset=utf-8"
	case kindLarge:
		p.ContentType = "text/html; charset=utf-8"
	case kindPDF:
		p.ContentType = "application/pdf"
	}
	g.pages[u] = p
	h.pages[key] = p
	return p
}

func (p *Page) link(href, target, text string) {
	p.body = append(p.body, elem{html: fmt.Sprintf(`<p><a href="%s">%s</a></p>`, html.EscapeString(href), html.EscapeString(text)), target: target})
}

func (p *Page) raw(s string) { p.body = append(p.body, elem{html: s}) }

// build makes the pages of every host. Hosts must have their Origin set.
func build(cfg Config, content []*Host, special map[string]*Host) *graph {
	g := &graph{pages: map[string]*Page{}}
	n := cfg.PagesPerHost
	regular := make([][]*Page, len(content))
	for i, h := range content {
		regular[i] = make([]*Page, n)
		for k := range n {
			p := g.add(h, regularPath(k), kindHTML, 200)
			p.title = fmt.Sprintf("%s page %d", h.Name, k)
			p.pad = cfg.PageBytes
			regular[i][k] = p
		}
	}
	// Links of regular pages: each page links the next, so a host's home page reaches all of them, then random
	// ones, some to other hosts, written in every form a page may use.
	for i := range content {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		for k, p := range regular[i] {
			if k+1 < n {
				p.link(hrefVariant(rng, cfg, p, regular[i][k+1]), regular[i][k+1].URL, fmt.Sprintf("next: page %d", k+1))
			}
			for range cfg.LinksPerPage - 1 {
				j := i
				if len(content) > 1 && rng.Float64() < cfg.CrossHostLinks {
					if j = rng.IntN(len(content) - 1); j >= i {
						j++
					}
				}
				t := regular[j][rng.IntN(n)]
				if cfg.Hostile.Redirects > 0 && rng.Float64() < cfg.Hostile.Redirects {
					r := redirectTo(g, rng, p.host, t)
					p.link(r.key, r.URL, "moved: "+t.title)
					continue
				}
				p.link(hrefVariant(rng, cfg, p, t), t.URL, t.title)
			}
		}
	}
	hostile(g, cfg, content, regular)
	if !cfg.Plain {
		for i, h := range content {
			standardExtras(g, cfg, h, regular[i][0])
		}
		features(g, cfg, content, special, regular[0][0])
	}
	timing(g, cfg, content, regular)
	for _, p := range g.pages {
		p.finish()
	}
	return g
}

// defaultPort is the explicit default port of scheme, as a ":80" suffix.
func defaultPort(scheme string) string {
	if scheme == "https" {
		return ":443"
	}
	return ":80"
}

func regularPath(k int) string {
	if k == 0 {
		return "/"
	}
	return fmt.Sprintf("/d%d/page%d.html", k%4, k)
}

// hrefVariant writes a link from p to t in one of the forms real pages use; all resolve to t.URL.
func hrefVariant(rng *rand.Rand, cfg Config, p, t *Page) string {
	named := !cfg.UseIPs
	if t.host != p.host {
		switch v := rng.IntN(4); {
		case v == 1 && named:
			return t.host.scheme + "://" + strings.ToUpper(t.host.host) + t.key
		case v == 2 && named:
			return t.host.scheme + "://" + t.host.host + defaultPort(t.host.scheme) + t.key
		case v == 3:
			return t.URL + "#from-" + p.host.Name
		}
		return t.URL
	}
	switch rng.IntN(8) {
	case 1:
		return relPath(p.key, t.key)
	case 2:
		return "./" + relPath(p.key, t.key)
	case 3:
		return t.URL
	case 4:
		return relPath(p.key, t.key) + "#section"
	case 5:
		if named {
			return t.host.scheme + "://" + strings.ToUpper(t.host.host) + t.key
		}
	case 6:
		if named {
			return t.host.scheme + "://" + t.host.host + defaultPort(t.host.scheme) + t.key
		}
	case 7:
		return t.key + "#top"
	}
	return t.key
}

// relPath writes the path-relative reference from the page at from to the page at to (both absolute paths).
func relPath(from, to string) string {
	depth := strings.Count(from[:strings.LastIndex(from, "/")+1], "/") - 1
	rel := strings.Repeat("../", depth) + strings.TrimPrefix(to, "/")
	if rel == "" || strings.HasPrefix(rel, "?") {
		rel = "./" + rel
	}
	return rel
}

// standardExtras adds the pages every content host has beside the regular ones, linked from its home page.
func standardExtras(g *graph, cfg Config, h *Host, home *Page) {
	html := func(key, title string) *Page {
		p := g.add(h, key, kindHTML, 200)
		p.title = title
		p.link("/", home.URL, "home")
		return p
	}
	secret := html("/private/secret.html", "disallowed by robots.txt")
	open := html("/private/open.html", "allowed by robots.txt (longest match)")
	tilde := html("/~user/index.html", "a user directory")
	list := html("/list?a=1&b=2", "a query page")
	session := html("/cal?sessionid=42", "disallowed by a wildcard rule")
	bak := html("/data.bak", "disallowed by an end-anchored rule")
	bakq := html("/data.bak?v=1", "allowed: the end anchor does not match")
	home.link("/private/secret.html", secret.URL, secret.title)
	home.link("private/open.html", open.URL, open.title)
	home.link("/%7Euser/index.html", tilde.URL, "user directory (escaped tilde)")
	tilde.link("/~user/index.html", tilde.URL, "self (plain tilde)")
	home.link("/list?b=2&a=1", list.URL, "query, arguments reordered")
	list.link("?a=1&b=2", list.URL, "self, arguments in order")
	home.link("/cal?sessionid=42", session.URL, session.title)
	home.link("/data.bak", bak.URL, bak.title)
	home.link("/data.bak?v=1", bakq.URL, bakq.title)
}

// features adds the feature pages to host1 (linked from /features.html, which its home page links) and the pages
// of the special hosts.
func features(g *graph, cfg Config, content []*Host, special map[string]*Host, home *Page) {
	h := content[0]
	f := g.add(h, "/features.html", kindHTML, 200)
	f.title = "features"
	home.link("features.html", f.URL, "features")
	page := func(key, title string) *Page {
		p := g.add(h, key, kindHTML, 200)
		p.title = title
		return p
	}
	redirect := func(key string, status int, location, target string) *Page {
		p := g.add(h, key, kindRedirect, status)
		p.Location = target
		p.location = location
		return p
	}

	// Redirects: a 301 → 302 → 307 → 308 chain, a relative Location, a cross-host redirect and a loop.
	final := page("/redirect-target.html", "end of the redirect chain")
	f.link("/r/chain/1", h.Origin+"/r/chain/1", "redirect chain")
	redirect("/r/chain/1", 301, "/r/chain/2", h.Origin+"/r/chain/2")
	redirect("/r/chain/2", 302, h.Origin+"/r/chain/3", h.Origin+"/r/chain/3")
	redirect("/r/chain/3", 307, "4", h.Origin+"/r/chain/4")
	redirect("/r/chain/4", 308, "../../redirect-target.html", final.URL)
	other := content[len(content)-1]
	cross := g.add(other, "/from-redirect.html", kindHTML, 200)
	cross.title = "target of a cross-host redirect"
	f.link("/r/cross", h.Origin+"/r/cross", "cross-host redirect")
	redirect("/r/cross", 301, cross.URL, cross.URL)
	f.link(loopPrefix+"a", h.Origin+loopPrefix+"a", "redirect loop")
	redirect(loopPrefix+"a", 302, loopPrefix+"b", h.Origin+loopPrefix+"b")
	redirect(loopPrefix+"b", 302, loopPrefix+"a", h.Origin+loopPrefix+"a")

	// Errors.
	for _, st := range []int{404, 410, 429, 500, 503} {
		key := fmt.Sprintf("/err/%d", st)
		p := g.add(h, key, kindError, st)
		p.title = fmt.Sprintf("error %d", st)
		f.link(key, p.URL, p.title)
	}

	// Non-HTML and large bodies; the PDF's text holds a URL that must not be followed.
	pdf := g.add(h, "/files/doc.pdf", kindPDF, 200)
	f.link("/files/doc.pdf", pdf.URL, "a PDF")
	large := g.add(h, "/large.html", kindLarge, 200)
	f.link("/large.html", large.URL, "a large page")
	largeChunked := g.add(h, "/large-chunked.html", kindLarge, 200)
	largeChunked.chunked = true
	f.link("/large-chunked.html", largeChunked.URL, "a large page without Content-Length")
	sniffHTML := g.add(h, "/sniff/page", kindSniffHTML, 200)
	sniffHTML.title = "HTML without Content-Type"
	sniffTarget := page("/sniff/target.html", "linked from a page without Content-Type")
	sniffHTML.link("target.html", sniffTarget.URL, sniffTarget.title)
	f.link("/sniff/page", sniffHTML.URL, sniffHTML.title)
	sniffPDF := g.add(h, "/sniff/doc", kindSniffPDF, 200)
	f.link("/sniff/doc", sniffPDF.URL, "PDF without Content-Type")

	// Compressed pages: the targets are found only by a crawler that decodes the body.
	for _, enc := range []string{"gzip", "br"} {
		p := page("/enc/"+enc+".html", enc+" encoded page")
		p.Encoding = enc
		p.pad = 4096
		t := page("/enc/"+enc+"-target.html", "linked from the "+enc+" page")
		p.link(enc+"-target.html", t.URL, t.title)
		f.link(p.key, p.URL, p.title)
	}

	// nofollow: one target only behind nofollow links, one behind both kinds.
	nf := page("/nofollow.html", "nofollow links")
	only := page("/nf/only.html", "reachable only through nofollow")
	both := page("/nf/both.html", "reachable through a followed link too")
	nf.body = append(nf.body,
		elem{html: `<p><a rel="nofollow" href="/nf/only.html">nofollow</a></p>`, target: only.URL, nofollow: true},
		elem{html: `<p><a href="nf/both.html" rel="external nofollow">nofollow too</a></p>`, target: both.URL, nofollow: true})
	nf.link("/nf/both.html", both.URL, "followed")
	f.link("/nofollow.html", nf.URL, nf.title)

	// <meta name="robots" content="nofollow">: every link of the page is nofollow.
	mnf := page("/meta-nofollow.html", "meta robots nofollow")
	mnf.head = append(mnf.head, elem{html: `<meta name="robots" content="noindex, nofollow">`})
	mOnly := page("/nf/meta-only.html", "reachable only through a meta-nofollow page")
	mnf.body = append(mnf.body, elem{html: `<p><a href="nf/meta-only.html">under meta nofollow</a></p>`, target: mOnly.URL, nofollow: true})
	f.link("/meta-nofollow.html", mnf.URL, mnf.title)

	// <link> elements, and links a crawler must not follow.
	meta := page("/meta.html", "head links")
	alt := page("/fr/meta.html", "alternate language")
	meta.head = append(meta.head,
		elem{html: `<link rel="canonical" href="` + meta.URL + `">`, target: meta.URL},
		elem{html: `<link rel="alternate" hreflang="fr" href="/fr/meta.html">`, target: alt.URL},
		elem{html: `<link rel="stylesheet" href="/static/style.css">`},
		elem{html: `<script src="/static/app.js"></script>`})
	meta.raw(`<p><img src="/static/logo.png" alt="logo"></p>`)
	meta.raw(`<p><a href="mailto:webmaster@` + h.Name + `">mail</a> <a href="javascript:void(0)">js</a> <a href="ftp://` + h.Name + `/file.txt">ftp</a> <a href="tel:+100">tel</a> <a href="data:text/html,hi">data</a></p>`)
	meta.link("#top", meta.URL, "fragment only")
	f.link("/meta.html", meta.URL, meta.title)

	// Frames, iframes and image maps.
	frames := page("/frames.html", "frameset")
	frames.frameset = true
	left := page("/frames/left.html", "left frame")
	right := page("/frames/right.html", "right frame")
	frames.body = append(frames.body,
		elem{html: `<frame src="frames/left.html">`, target: left.URL},
		elem{html: `<frame src="/frames/right.html">`, target: right.URL})
	f.link("/frames.html", frames.URL, frames.title)
	ifr := page("/iframe.html", "iframe")
	inner := page("/frames/inner.html", "inside an iframe")
	ifr.body = append(ifr.body, elem{html: `<iframe src="/frames/inner.html"></iframe>`, target: inner.URL})
	f.link("/iframe.html", ifr.URL, ifr.title)
	mp := page("/map.html", "image map")
	ma := page("/map/a.html", "map area a")
	mb := page("/map/b.html", "map area b")
	mp.raw(`<img src="/static/map.png" usemap="#m" alt="map"><map name="m">`)
	mp.body = append(mp.body,
		elem{html: `<area shape="rect" coords="0,0,10,10" href="map/a.html" alt="a">`, target: ma.URL},
		elem{html: `<area shape="rect" coords="10,0,20,10" href="/map/b.html" alt="b">`, target: mb.URL})
	mp.raw(`</map>`)
	f.link("/map.html", mp.URL, mp.title)

	// URL variants: every link of this page leads to /variants/target.html.
	vars := page("/variants.html", "URL variants")
	vt := page("/variants/target.html", "target of every variant")
	forms := []string{"/variants/target.html", "variants/target.html", "./variants/target.html",
		"/variants/./x/../target.html", "/variants/target.html#frag", "/variants/%74arget.html", vt.URL,
		" \t/variants/target.html\n ", "/variants/tar\nget.html", "\\variants\\target.html"}
	if !cfg.UseIPs {
		forms = append(forms, h.scheme+"://"+strings.ToUpper(h.host)+"/variants/target.html",
			h.scheme+"://"+h.host+defaultPort(h.scheme)+"/variants/target.html",
			strings.ToUpper(h.scheme)+"://"+h.host+"/variants/target.html")
	}
	for _, v := range forms {
		vars.link(v, vt.URL, "variant")
	}
	f.link("/variants.html", vars.URL, vars.title)

	// <base href>.
	based := page("/based/index.html", "base href")
	deeper := page("/based/deeper/page.html", "resolved against base")
	up := page("/based/up.html", "dot-dot against base")
	rooted := page("/rooted.html", "root-relative against base")
	based.head = append(based.head, elem{html: `<base href="` + h.Origin + `/based/deeper/">`})
	based.link("page.html", deeper.URL, deeper.title)
	based.link("../up.html", up.URL, up.title)
	based.link("/rooted.html", rooted.URL, rooted.title)
	f.link("/based/index.html", based.URL, based.title)

	// The special hosts.
	if s := special["slow"]; s != nil {
		sh := g.add(s, "/", kindHTML, 200)
		sh.title = "slow host"
		s1 := g.add(s, "/slow/1.html", kindHTML, 200)
		s1.title = "slow page"
		sh.link("/slow/1.html", s1.URL, s1.title)
		f.link(sh.URL, sh.URL, "slow host")
	}
	// Subdomains of host1.test: hosts of the same registrable domain, linked to each other and to host1.
	www, blog := special["www.host1"], special["blog.host1"]
	if www != nil && blog != nil {
		var homes []*Page
		for _, s := range []*Host{www, blog} {
			home := g.add(s, "/", kindHTML, 200)
			home.title = s.Name + " home"
			prev := home
			for k := 1; k <= 3; k++ {
				p := g.add(s, fmt.Sprintf("/p/%d.html", k), kindHTML, 200)
				p.title = fmt.Sprintf("%s page %d", s.Name, k)
				prev.link(p.key, p.URL, p.title)
				prev = p
			}
			prev.link(h.Origin+"/", h.Origin+"/", "up to "+h.Name)
			homes = append(homes, home)
		}
		homes[0].link(homes[1].URL, homes[1].URL, "blog")
		f.link(homes[0].URL, homes[0].URL, "www subdomain")
	}
	// An internationalised host name, linked by its Unicode name in two cases.
	if idn := special["xn--bcher-kva"]; idn != nil {
		home := g.add(idn, "/", kindHTML, 200)
		home.title = "bücher.test"
		p := g.add(idn, "/seite.html", kindHTML, 200)
		p.title = "eine Seite"
		home.link("seite.html", p.URL, p.title)
		unicode := strings.Replace(idn.Origin, IDNHost, "bücher.test", 1)
		f.link(unicode+"/", home.URL, "IDN host")
		f.link(strings.Replace(idn.Origin, IDNHost, "BÜCHER.test", 1)+"/seite.html", p.URL, "IDN host, upper case")
	}
	for _, name := range []string{"blackhole", "refused", "nxdomain"} {
		if s := special[name]; s != nil {
			p := g.add(s, "/", kindNone, 0)
			f.link(p.URL, p.URL, name)
		}
	}
}

// finish computes Links, Nofollow and Outcome from the page's elements.
func (p *Page) finish() {
	var follow, nofollow []string
	for _, e := range slices.Concat(p.head, p.body) {
		if e.target == "" {
			continue
		}
		if e.nofollow {
			nofollow = append(nofollow, e.target)
		} else if !slices.Contains(follow, e.target) {
			follow = append(follow, e.target)
		}
	}
	for _, t := range nofollow {
		if !slices.Contains(follow, t) && !slices.Contains(p.Nofollow, t) {
			p.Nofollow = append(p.Nofollow, t)
		}
	}
	p.Links = follow
	switch {
	case p.kind == kindNone:
		switch p.host.kind {
		case hostBlackhole:
			p.Outcome = NoResponse
		case hostRefused:
			p.Outcome = Refused
		default:
			p.Outcome = DNSError
		}
	case !robotsAllowed(p.host.Robots, "*", p.key):
		p.Outcome = RobotsDisallowed
	default:
		p.Outcome = p.fetchOutcome()
	}
}

// fetchOutcome is the outcome of asking the server for p, robots.txt aside.
func (p *Page) fetchOutcome() Outcome {
	switch {
	case p.kind == kindNone:
		return p.Outcome
	case p.kind == kindLarge:
		return Large
	case p.Status >= 300 && p.Status < 400:
		return Redirect
	case p.Status >= 400:
		return HTTPError
	}
	return OK
}

// Reach is the ground truth of a crawl: every URL a correct crawler learns about (seeds, followed links,
// redirect targets), with what it sees for it.
type Reach map[string]Outcome

// URLs returns the URLs of r whose outcome is one of outcomes (all of them when none is given), sorted.
func (r Reach) URLs(outcomes ...Outcome) []string {
	var out []string
	for u, o := range r {
		if len(outcomes) == 0 || slices.Contains(outcomes, o) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// ReachOptions describe the crawler whose crawl Reachable predicts.
type ReachOptions struct {
	// UserAgent picks the robots.txt group; "" is the generic agent "*".
	UserAgent string
	// IgnoreRobots fetches what robots.txt forbids.
	IgnoreRobots bool
	// FollowNofollow follows rel=nofollow links too.
	FollowNofollow bool
	// InScope, when set, keeps the crawl to the URLs it accepts (seeds are always visited): a crawler with a
	// scope (e.g. the seeds' registered domains) never learns about the others.
	InScope func(rawURL string) bool
}

func (g *graph) reach(hosts map[string]*Host, opts ReachOptions, seeds []string) (Reach, error) {
	r := Reach{}
	var queue []string
	seeding := true
	visit := func(u string) {
		if opts.InScope != nil && !seeding && !opts.InScope(u) {
			return
		}
		if _, seen := r[u]; !seen {
			r[u] = ""
			queue = append(queue, u)
		}
	}
	for _, s := range seeds {
		u, err := Normalize("", s)
		if err != nil {
			return nil, err
		}
		visit(u)
	}
	seeding = false
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		p := g.pages[u]
		if p == nil {
			pu, _ := url.Parse(u)
			h := hosts[pu.Host]
			switch {
			case h == nil:
				r[u] = DNSError
			case !opts.IgnoreRobots && !robotsAllowed(h.Robots, opts.UserAgent, pathQuery(pu)):
				r[u] = RobotsDisallowed
			default:
				r[u] = HTTPError // the server answers 404 for paths it does not know
			}
			continue
		}
		o := p.fetchOutcome()
		if p.kind != kindNone && !opts.IgnoreRobots && !robotsAllowed(p.host.Robots, opts.UserAgent, p.key) {
			o = RobotsDisallowed
		}
		r[u] = o
		switch o {
		case Redirect:
			visit(p.Location)
		case OK:
			for _, l := range p.Links {
				visit(l)
			}
			if opts.FollowNofollow {
				for _, l := range p.Nofollow {
					visit(l)
				}
			}
		}
	}
	return r, nil
}
