package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb"
)

const urlfrontierUsage = `usage: frontierctl urlfrontier [--addr host:port] [--crawl ID] [--timeout 30s] COMMAND
  put FILE|-                       add the URLs of FILE (one a line, # comments) as discovered
  get [--max-queues N] [--max-urls N] [--key K] [--lease SECONDS]
                                   lease URLs due now and print them (key TAB url)
  done URL...                      report URLs fetched, never to be fetched again
  stats [--key K]                  the crawl's (or one queue's) counters
  queues [--all]                   the crawl's queues (--all: inactive ones too)
  block KEY UNTIL                  block a queue until UNTIL (epoch seconds, a duration like 10m, or 0 to unblock)
  delay [--key K] SECONDS          least seconds between two sends of queue K (no key: the default)`

// urlfrontierCmd is a small client of the URLFrontier API (package urlfrontier) for operators: put seeds, take
// and acknowledge URLs, read counters, block and slow queues.
func urlfrontierCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("urlfrontier", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, urlfrontierUsage) }
	addr := fs.String("addr", "127.0.0.1:7071", "the URLFrontier service (standalone --urlfrontier ADDR)")
	crawl := fs.String("crawl", "", "crawl ID (empty: DEFAULT)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return fmt.Errorf("%w: urlfrontier: no command\n%s", errUsage, urlfrontierUsage)
	}
	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("urlfrontier: %w", err)
	}
	defer conn.Close()
	c := pb.NewURLFrontierClient(conn)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	sub := flag.NewFlagSet("urlfrontier "+rest[0], flag.ContinueOnError)
	sub.SetOutput(stderr)
	key := sub.String("key", "", "queue key")
	maxQueues := sub.Uint("max-queues", 0, "at most this many queues (0: no limit)")
	maxURLs := sub.Uint("max-urls", 0, "at most this many URLs a queue (0: no limit)")
	lease := sub.Uint("lease", 0, "seconds the URLs stay leased (0: the service's default)")
	all := sub.Bool("all", false, "include inactive queues")
	if err := sub.Parse(rest[1:]); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	pos := sub.Args()
	switch rest[0] {
	case "put":
		if len(pos) != 1 {
			return fmt.Errorf("%w: urlfrontier put FILE|-", errUsage)
		}
		return ufPut(ctx, c, *crawl, pos[0], stdout)
	case "get":
		st, err := c.GetURLs(ctx, &pb.GetParams{MaxQueues: uint32(*maxQueues), MaxUrlsPerQueue: uint32(*maxURLs), Key: *key,
			DelayRequestable: uint32(*lease), Item: &pb.GetParams_CrawlID{CrawlID: *crawl}})
		if err != nil {
			return fmt.Errorf("urlfrontier get: %w", err)
		}
		for {
			u, err := st.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("urlfrontier get: %w", err)
			}
			fmt.Fprintf(stdout, "%s\t%s\n", u.Key, u.Url)
		}
	case "done":
		if len(pos) == 0 {
			return fmt.Errorf("%w: urlfrontier done URL...", errUsage)
		}
		var items []*pb.URLItem
		for _, u := range pos {
			items = append(items, &pb.URLItem{Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{Info: &pb.URLInfo{Url: u, Key: *key, CrawlID: *crawl}}}})
		}
		return ufSend(ctx, c, items, stdout)
	case "stats":
		st, err := c.GetStats(ctx, &pb.QueueWithinCrawlParams{Key: *key, CrawlID: *crawl})
		if err != nil {
			return fmt.Errorf("urlfrontier stats: %w", err)
		}
		fmt.Fprintf(stdout, "crawl %s: %d URLs queued or leased, %d leased, %d queues\n", st.CrawlID, st.Size, st.InProcess, st.NumberOfQueues)
		names := make([]string, 0, len(st.Counts))
		for k := range st.Counts {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(stdout, "  %s %d\n", k, st.Counts[k])
		}
		return nil
	case "queues":
		for start := uint32(0); ; {
			ql, err := c.ListQueues(ctx, &pb.Pagination{CrawlID: *crawl, IncludeInactive: *all, Start: start, Size: 1000})
			if err != nil {
				return fmt.Errorf("urlfrontier queues: %w", err)
			}
			for _, q := range ql.Values {
				fmt.Fprintln(stdout, q)
			}
			if len(ql.Values) < 1000 {
				return nil
			}
			start += uint32(len(ql.Values))
		}
	case "block":
		if len(pos) != 2 {
			return fmt.Errorf("%w: urlfrontier block KEY UNTIL", errUsage)
		}
		until, err := parseUntil(pos[1], time.Now())
		if err != nil {
			return fmt.Errorf("%w: urlfrontier block: %v", errUsage, err)
		}
		if _, err := c.BlockQueueUntil(ctx, &pb.BlockQueueParams{Key: pos[0], Time: until, CrawlID: *crawl}); err != nil {
			return fmt.Errorf("urlfrontier block: %w", err)
		}
		if until == 0 {
			fmt.Fprintf(stdout, "%s unblocked\n", pos[0])
		} else {
			fmt.Fprintf(stdout, "%s blocked until %s\n", pos[0], time.Unix(int64(until), 0).UTC().Format(time.RFC3339))
		}
		return nil
	case "delay":
		if len(pos) != 1 {
			return fmt.Errorf("%w: urlfrontier delay [--key K] SECONDS", errUsage)
		}
		secs, err := strconv.ParseUint(pos[0], 10, 32)
		if err != nil {
			return fmt.Errorf("%w: urlfrontier delay: %q is not a number of seconds", errUsage, pos[0])
		}
		if _, err := c.SetDelay(ctx, &pb.QueueDelayParams{Key: *key, DelayRequestable: uint32(secs), CrawlID: *crawl}); err != nil {
			return fmt.Errorf("urlfrontier delay: %w", err)
		}
		return nil
	}
	return fmt.Errorf("%w: urlfrontier: unknown command %q\n%s", errUsage, rest[0], urlfrontierUsage)
}

// parseUntil reads block's UNTIL: epoch seconds, or a duration from now.
func parseUntil(s string, now time.Time) (uint64, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("UNTIL %q is neither epoch seconds nor a duration such as 10m", s)
	}
	return uint64(now.Add(d).Unix()), nil
}

// ufPut reads seed lines and sends them as discovered URLs.
func ufPut(ctx context.Context, c pb.URLFrontierClient, crawl, file string, stdout io.Writer) error {
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	var items []*pb.URLItem
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u := strings.Fields(line)[0]
		items = append(items, &pb.URLItem{Item: &pb.URLItem_Discovered{Discovered: &pb.DiscoveredURLItem{Info: &pb.URLInfo{Url: u, CrawlID: crawl}}}})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return ufSend(ctx, c, items, stdout)
}

// ufSend sends items on one PutURLs stream and prints how they were acknowledged.
func ufSend(ctx context.Context, c pb.URLFrontierClient, items []*pb.URLItem, stdout io.Writer) error {
	st, err := c.PutURLs(ctx)
	if err != nil {
		return fmt.Errorf("urlfrontier put: %w", err)
	}
	errc := make(chan error, 1)
	counts := map[pb.AckMessage_Status]int{}
	go func() {
		for {
			a, err := st.Recv()
			if errors.Is(err, io.EOF) {
				errc <- nil
				return
			}
			if err != nil {
				errc <- err
				return
			}
			counts[a.Status]++
			if a.Status != pb.AckMessage_OK {
				fmt.Fprintf(stdout, "%s %s\n", a.Status, a.ID)
			}
		}
	}()
	for _, it := range items {
		if err := st.Send(it); err != nil {
			break // the receive side reports why
		}
	}
	_ = st.CloseSend()
	if err := <-errc; err != nil {
		return fmt.Errorf("urlfrontier put: %w", err)
	}
	fmt.Fprintf(stdout, "%d sent: %d OK, %d SKIPPED (known or invalid), %d FAIL\n", len(items),
		counts[pb.AckMessage_OK], counts[pb.AckMessage_SKIPPED], counts[pb.AckMessage_FAIL])
	if counts[pb.AckMessage_FAIL] > 0 {
		return errors.New("urlfrontier put: some URLs failed; send them again")
	}
	return nil
}
