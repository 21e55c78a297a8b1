package frontier

// The events that travel on Frontier's streams, one Go type per Frontera message. The codec package turns them
// into the bytes Frontera 0.8 writes (msgpack by default, or Frontera's JSON codec).
//
//	stream       messages
//	spider log   PageCrawled, LinksExtracted, RequestError, Offset, AddSeeds
//	scoring log  UpdateScore, NewJobID
//	stats log    Stats
//	spider feed  bare *Request (no Message wrapper; codec.Encoder.EncodeRequest)

// The wire tags of the messages (Frontera sends them as msgpack bin).
const (
	TagPageCrawled    = "pc"
	TagLinksExtracted = "le"
	TagRequestError   = "re"
	TagOffset         = "of"
	TagUpdateScore    = "us"
	TagNewJobID       = "njid"
	TagStats          = "st"
	TagAddSeeds       = "as" // Frontera 0.7 only; Frontier uses it to inject seeds through the spider log
)

// Message is one event on the spider log, scoring log or stats log. The concrete types are the pointer types
// *PageCrawled, *LinksExtracted, *RequestError, *Offset, *UpdateScore, *NewJobID, *Stats and *AddSeeds; a type
// switch over them is the way to dispatch. Messages are plain values: not safe for concurrent mutation.
type Message interface {
	// Tag returns the message's wire tag (TagPageCrawled, …).
	Tag() string
	// Name returns Frontera's name of the message ("page_crawled", …), as in its JSON codec and its decoded tuples.
	Name() string
}

// PageCrawled reports a fetched page (Frontera's page_crawled). Response.Request carries the meta of the request
// that was fetched; on the wire only the response URL travels, so a decoded Response.Request has URL = Response.URL.
type PageCrawled struct {
	Response *Response
}

// LinksExtracted reports the links found on the page of Request (Frontera's links_extracted). Frontera splits
// the links of one page into one message per link host, repeating Request in each.
type LinksExtracted struct {
	Request *Request
	Links   []*Request
}

// RequestError reports a request that could not be fetched; Error is the error's class name, e.g.
// "DNSLookupError" (Frontera's request_error).
type RequestError struct {
	Request *Request
	Error   string
}

// Offset reports a spider's position in its feed partition (Frontera's offset).
type Offset struct {
	Partition int
	Offset    int64
}

// UpdateScore is a strategy's decision about one request (Frontera's update_score): Schedule says whether to
// queue it with Score in [0, 1].
type UpdateScore struct {
	Request  *Request
	Score    float64
	Schedule bool
}

// NewJobID starts a new crawl job (Frontera's new_job_id): the DB worker stamps ID into meta jid.
type NewJobID struct {
	ID int64
}

// Stats is a periodic statistics report (Frontera's stats): counters under str keys, plus "_timestamp" and "_tags".
type Stats struct {
	Map Map
}

// AddSeeds injects seed requests (Frontera 0.7's add_seeds; 0.8 dropped it).
type AddSeeds struct {
	Seeds []*Request
}

func (*PageCrawled) Tag() string    { return TagPageCrawled }
func (*LinksExtracted) Tag() string { return TagLinksExtracted }
func (*RequestError) Tag() string   { return TagRequestError }
func (*Offset) Tag() string         { return TagOffset }
func (*UpdateScore) Tag() string    { return TagUpdateScore }
func (*NewJobID) Tag() string       { return TagNewJobID }
func (*Stats) Tag() string          { return TagStats }
func (*AddSeeds) Tag() string       { return TagAddSeeds }

func (*PageCrawled) Name() string    { return "page_crawled" }
func (*LinksExtracted) Name() string { return "links_extracted" }
func (*RequestError) Name() string   { return "request_error" }
func (*Offset) Name() string         { return "offset" }
func (*UpdateScore) Name() string    { return "update_score" }
func (*NewJobID) Name() string       { return "new_job_id" }
func (*Stats) Name() string          { return "stats" }
func (*AddSeeds) Name() string       { return "add_seeds" }
