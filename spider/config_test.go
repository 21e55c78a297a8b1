package spider

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := DefaultConfig()
	bad.UserAgent = ""
	bad.ConnsPerHost = 0
	bad.Delay = -1
	bad.RequestTimeout = 0
	bad.MaxBodyBytes = 0
	bad.MaxRedirects = -1
	bad.MaxInFlight = 0
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, key := range []string{"user_agent", "conns_per_host", "delay", "request_timeout", "max_body_bytes", "max_redirects", "max_in_flight"} {
		if !strings.Contains(err.Error(), "spider: "+key+":") {
			t.Errorf("error does not name %s:\n%v", key, err)
		}
	}
	if _, err := New(DefaultConfig(), Deps{}); err == nil || !strings.Contains(err.Error(), "Deps.Feed") {
		t.Errorf("New without deps: %v", err)
	}
}
